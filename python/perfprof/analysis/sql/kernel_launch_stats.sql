-- kernel_launch_stats: per device, how long launches take and how long work waits after its
-- launch: HolisticTraceAnalysis's get_cuda_kernel_launch_stats, summarised.
-- The launches are those of kernel_launches.sql (the same filter; keep the two in step):
--   launch_delay_ns = max(work start - runtime call end, 0)
--   short_kernels           GPU duration < its call's CPU duration, among calls within the
--                           runtime cut-off (HTA: launch overhead dominates them)
--   runtime_outliers        calls longer than :runtime_cutoff_ns (default 50 us, as HTA)
--   launch_delay_outliers   launch delay above :launch_delay_cutoff_ns (default 100 us, as HTA)
WITH launches AS MATERIALIZED (
    SELECT deviceId, launchEnd - launchStart AS cpu_ns, duration AS gpu_ns, max(start - launchEnd, 0) AS delay_ns
    FROM KERNEL_DETAILS
    WHERE launchNameId IN (SELECT id FROM StringIds
                           WHERE value IN ('cudaLaunchKernel', 'cudaLaunchKernelExC')
                              OR (coalesce(:include_memory, 1) AND value IN ('cudaMemcpyAsync', 'cudaMemsetAsync')))
),
per_device AS (
    SELECT deviceId,
           count(*) AS kernels,
           avg(delay_ns) AS avg_launch_delay_ns,
           max(delay_ns) AS max_launch_delay_ns,
           sum(gpu_ns < cpu_ns AND cpu_ns <= coalesce(:runtime_cutoff_ns, 50000)) AS short_kernels,
           sum(cpu_ns > coalesce(:runtime_cutoff_ns, 50000)) AS runtime_outliers,
           sum(delay_ns > coalesce(:launch_delay_cutoff_ns, 100000)) AS launch_delay_outliers
    FROM launches GROUP BY deviceId
),
-- The middle delay, or the mean of the middle two: positions (n+1)/2 and (n+2)/2.
middle AS (
    SELECT r.deviceId, avg(r.delay_ns) AS median_launch_delay_ns
    FROM (SELECT deviceId, delay_ns, row_number() OVER (PARTITION BY deviceId ORDER BY delay_ns) AS position
          FROM launches) AS r
    JOIN per_device AS p ON p.deviceId = r.deviceId
    WHERE r.position IN ((p.kernels + 1) / 2, (p.kernels + 2) / 2)
    GROUP BY r.deviceId
)
SELECT p.deviceId, p.kernels, p.avg_launch_delay_ns, m.median_launch_delay_ns, p.max_launch_delay_ns,
       p.short_kernels, p.runtime_outliers, p.launch_delay_outliers
FROM per_device AS p JOIN middle AS m ON m.deviceId = p.deviceId
ORDER BY p.deviceId;
