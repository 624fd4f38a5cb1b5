-- memory_by_operator: the tensor allocations of a profile_memory run per device and the operator
-- that made them (OP_MEMORY, operator_memory.csv's rows: the innermost operator around the
-- allocation; NULL: none), most bytes allocated first.
--   allocations, allocated_bytes, largest_bytes   count, sum and maximum of the allocations' sizes
--   freed                                         allocations freed inside the window
--   held_bytes                                    bytes of those still allocated at the window's end
--   avg_lifetime_ns                               mean time from allocation to free of the freed ones
-- The :top rows (default 10; -1 every row).
SELECT devices.value AS deviceType,
       names.value AS operator,
       count(*) AS allocations,
       sum(allocation.size) AS allocated_bytes,
       max(allocation.size) AS largest_bytes,
       count(allocation.releaseTime) AS freed,
       sum(CASE WHEN allocation.releaseTime IS NULL THEN allocation.size ELSE 0 END) AS held_bytes,
       avg(allocation.duration) AS avg_lifetime_ns
FROM OP_MEMORY AS allocation
LEFT JOIN StringIds AS names ON names.id = allocation.name
LEFT JOIN StringIds AS devices ON devices.id = allocation.deviceType
GROUP BY allocation.deviceType, allocation.name
ORDER BY allocated_bytes DESC, deviceType, operator
LIMIT coalesce(:top, 10);
