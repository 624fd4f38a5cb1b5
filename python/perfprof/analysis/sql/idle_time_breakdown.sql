-- Why each stream sat idle, as HolisticTraceAnalysis's get_idle_time_breakdown: every gap on a
-- stream before an activity (kernel, copy, set: KERNEL_DETAILS.waitTime, from the end of the
-- stream's earlier work to the activity's start) goes to
--   host_wait    when the activity's launch call began after the stream went idle (the host
--                did not queue work fast enough),
--   kernel_wait  else when the gap is shorter than :kernel_wait_threshold_ns (default 30 us:
--                the usual delay between back-to-back kernels),
--   other        otherwise (e.g. waiting for an event from another stream).
-- idle_pct is the category's share of the stream's idle time (NULL when it had none).
WITH gaps AS (
    SELECT deviceId, streamId, waitTime AS idle_ns, launchStart > start - waitTime AS host_wait
    FROM KERNEL_DETAILS
),
per_stream AS (
    SELECT deviceId, streamId,
           sum(idle_ns) AS idle_ns,
           coalesce(sum(idle_ns) FILTER (WHERE host_wait), 0) AS host_wait,
           coalesce(sum(idle_ns) FILTER (WHERE host_wait IS NOT 1
                                            AND idle_ns < coalesce(:kernel_wait_threshold_ns, 30000)), 0)
               AS kernel_wait
    FROM gaps GROUP BY deviceId, streamId
),
categories(category, position) AS (VALUES ('host_wait', 1), ('kernel_wait', 2), ('other', 3)),
per_category AS (
    SELECT s.deviceId, s.streamId, c.category, c.position, s.idle_ns AS stream_idle_ns,
           CASE c.category WHEN 'host_wait' THEN s.host_wait
                           WHEN 'kernel_wait' THEN s.kernel_wait
                           ELSE s.idle_ns - s.host_wait - s.kernel_wait END AS idle_ns
    FROM per_stream AS s CROSS JOIN categories AS c
)
SELECT deviceId, streamId, category, idle_ns, 100.0 * idle_ns / nullif(stream_idle_ns, 0) AS idle_pct
FROM per_category
ORDER BY deviceId, streamId, position;
