-- queue_length: per device and stream, the longest and the average queue of launches waiting
-- for the device. The queue is queue_length_over_time.sql's (the same launches: keep the two in
-- step): device work (KERNEL_DETAILS) launched by a call (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel,
-- cudaMemcpyAsync, cudaMemsetAsync, as HolisticTraceAnalysis counts) and not yet started on the
-- device. avg_queue_length weights each length by how long it held, from the stream's first
-- launch to its last start; HTA's get_queue_length_summary averages its change points instead.
-- That average needs no time series: the area under the queue is the sum of every launch's
-- wait (its start minus its launch), so the average is that sum over the stream's span.
-- The longest queue: the running sum of +1 at each launch and -1 at each start, the starts of
-- an instant before its launches, so a launch and a start at one time never count as two
-- waiting (the sum passes through no value above the one after all the instant's changes).
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
longest AS (
    SELECT deviceId, streamId, max(queue_length) AS max_queue_length
    FROM (SELECT deviceId, streamId,
                 sum(delta) OVER (PARTITION BY deviceId, streamId ORDER BY time_ns, delta ROWS UNBOUNDED PRECEDING)
                     AS queue_length
          FROM changes)
    GROUP BY deviceId, streamId
),
waits AS (
    SELECT deviceId, streamId, sum(start_ns - launch_ns) AS waiting_ns,
           max(max(launch_ns), max(start_ns)) - min(min(launch_ns), min(start_ns)) AS span_ns
    FROM launched GROUP BY deviceId, streamId
)
SELECT w.deviceId,
       w.streamId,
       l.max_queue_length,
       1.0 * w.waiting_ns / nullif(w.span_ns, 0) AS avg_queue_length
FROM waits AS w JOIN longest AS l ON l.deviceId = w.deviceId AND l.streamId = w.streamId
ORDER BY w.deviceId, w.streamId;
