-- kernel_launch_configs: the kernels by name, launching operator and launch configuration, with
-- their device time: which operator launched a kernel, and how (the Kernels view of perfprof ui).
-- Copies and sets have no launch configuration and are left out (top_kernels counts them).
--   operator              the innermost PyTorch operator around the launch call
--                         (KERNEL_DETAILS.operatorNameId); NULL: launched outside any operator
--   grid, block           the launch's dimensions as text, 'X x Y x Z' without spaces: '132x1x1'
--   registers_per_thread  CUPTI's; NULL where the run did not record it
--   shared_memory_bytes   static + dynamic shared memory per block; NULL likewise
--   occupancy_pct         mean theoretical occupancy (KERNEL_DETAILS; NULL where unknown)
--   count, total_ns, avg_ns, min_ns, max_ns   over the group's kernels' durations
-- The :top groups with the largest total (default 10; -1 every group), then by name and operator.
SELECT names.value AS name,
       operators.value AS operator,
       k.gridX || 'x' || k.gridY || 'x' || k.gridZ AS grid,
       k.blockX || 'x' || k.blockY || 'x' || k.blockZ AS block,
       launches.registersPerThread AS registers_per_thread,
       launches.staticSharedMemory + launches.dynamicSharedMemory AS shared_memory_bytes,
       avg(k.theoreticalOccupancy) AS occupancy_pct,
       count(*) AS count,
       sum(k.duration) AS total_ns,
       avg(k.duration) AS avg_ns,
       min(k.duration) AS min_ns,
       max(k.duration) AS max_ns
FROM KERNEL_DETAILS AS k
JOIN StringIds AS names ON names.id = k.nameId
LEFT JOIN StringIds AS operators ON operators.id = k.operatorNameId
LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL AS launches
       ON launches.deviceId = k.deviceId AND launches.correlationId = k.correlationId AND launches.start = k.start
WHERE k.type <> 'Memory'
GROUP BY k.nameId, k.operatorNameId, grid, block, registers_per_thread, shared_memory_bytes
ORDER BY total_ns DESC, name, operator
LIMIT coalesce(:top, 10);
