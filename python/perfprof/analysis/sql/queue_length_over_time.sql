-- queue_length_over_time: per device and stream, how many launches wait for the device: the
-- step function HolisticTraceAnalysis's get_queue_length_time_series draws. The length rises
-- by one when a launching call starts (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel,
-- cudaMemcpyAsync, cudaMemsetAsync: HTA's launch calls) and falls by one when that work starts
-- on the device. One row per time the length changes; it holds until the stream's next row.
-- Changes at the same instant are netted, so a launch and a start at one time never count as
-- two waiting. (queue_length.sql summarises the same series: keep the two in step.)
WITH launched AS MATERIALIZED (
    SELECT deviceId, streamId, launchStart AS launch_ns, start AS start_ns FROM KERNEL_DETAILS
    WHERE launchNameId IN (SELECT id FROM StringIds WHERE value IN (
        'cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel', 'cudaMemcpyAsync', 'cudaMemsetAsync'))
),
changes AS (
    SELECT deviceId, streamId, launch_ns AS time_ns, 1 AS delta FROM launched
    UNION ALL
    SELECT deviceId, streamId, start_ns, -1 FROM launched
),
per_time AS (
    SELECT deviceId, streamId, time_ns, sum(delta) AS delta FROM changes
    GROUP BY deviceId, streamId, time_ns
)
SELECT deviceId,
       streamId,
       time_ns AS start_ns,
       sum(delta) OVER (PARTITION BY deviceId, streamId ORDER BY time_ns ROWS UNBOUNDED PRECEDING)
           AS queue_length
FROM per_time
ORDER BY deviceId, streamId, start_ns;
