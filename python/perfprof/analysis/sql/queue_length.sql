-- queue_length: per device and stream, the longest and the average queue of launches waiting
-- for the device. The queue is queue_length_over_time.sql's (the same CTEs: keep the two in
-- step): launched by a call (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel,
-- cudaMemcpyAsync, cudaMemsetAsync, as HolisticTraceAnalysis counts) and not yet started on the
-- device. avg_queue_length weights each length by how long it held, from the stream's first
-- launch to its last start; HTA's get_queue_length_summary averages its change points instead.
WITH launch_calls AS (
    SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME
    WHERE nameId IN (SELECT id FROM StringIds WHERE value IN (
        'cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync'))
    UNION ALL
    SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_DRIVER
    WHERE nameId IN (SELECT id FROM StringIds WHERE value = 'cuLaunchKernel')
),
gpu_work AS (
    SELECT deviceId, streamId, correlationId, start FROM CUPTI_ACTIVITY_KIND_KERNEL
    UNION ALL
    SELECT deviceId, streamId, correlationId, start FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL
    SELECT deviceId, streamId, correlationId, start FROM CUPTI_ACTIVITY_KIND_MEMSET
),
launched AS MATERIALIZED (
    SELECT work.deviceId, work.streamId, calls.start AS launch_ns, work.start AS start_ns
    FROM launch_calls AS calls JOIN gpu_work AS work ON work.correlationId = calls.correlationId
),
changes AS (
    SELECT deviceId, streamId, launch_ns AS time_ns, 1 AS delta FROM launched
    UNION ALL
    SELECT deviceId, streamId, start_ns, -1 FROM launched
),
per_time AS (
    SELECT deviceId, streamId, time_ns, sum(delta) AS delta FROM changes
    GROUP BY deviceId, streamId, time_ns
),
series AS (
    SELECT deviceId, streamId,
           sum(delta) OVER stream_time AS queue_length,
           lead(time_ns) OVER stream_time - time_ns AS held_ns
    FROM per_time
    WINDOW stream_time AS (PARTITION BY deviceId, streamId ORDER BY time_ns ROWS UNBOUNDED PRECEDING)
)
SELECT deviceId,
       streamId,
       max(queue_length) AS max_queue_length,
       1.0 * sum(queue_length * held_ns) / sum(held_ns) AS avg_queue_length
FROM series
GROUP BY deviceId, streamId
ORDER BY deviceId, streamId;
