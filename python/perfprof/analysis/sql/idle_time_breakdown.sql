-- Why each stream sat idle, as HolisticTraceAnalysis's get_idle_time_breakdown: every gap on a
-- stream, from the end of one activity (kernel, copy, set) to the start of the next, goes to
--   host_wait    when the next activity's launch call began after the previous one ended
--                (the host did not queue work fast enough),
--   kernel_wait  else when the gap is shorter than :kernel_wait_threshold_ns (default 30 us:
--                the usual delay between back-to-back kernels),
--   other        otherwise (e.g. waiting for an event from another stream).
-- idle_pct is the category's share of the stream's idle time (NULL when it had none).
WITH activity AS (
    SELECT deviceId, streamId, start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
    UNION ALL
    SELECT deviceId, streamId, start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL
    SELECT deviceId, streamId, start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET
),
launches AS (
    SELECT correlationId, globalTid, start FROM CUPTI_ACTIVITY_KIND_RUNTIME
    UNION ALL
    SELECT correlationId, globalTid, start FROM CUPTI_ACTIVITY_KIND_DRIVER
),
gaps AS (
    SELECT a.deviceId, a.streamId,
           a.start - lag(a."end") OVER stream_order AS idle_ns,
           l.start > lag(a."end") OVER stream_order AS host_wait
    FROM activity AS a
    LEFT JOIN launches AS l
        ON l.correlationId = a.correlationId AND l.globalTid / 0x1000000 = a.globalPid / 0x1000000
    WINDOW stream_order AS (PARTITION BY a.deviceId, a.streamId ORDER BY a.start, a."end")
),
per_stream AS (
    -- every stream (its first activity has no gap before it: idle_ns NULL), its gaps by category
    SELECT deviceId, streamId,
           coalesce(sum(idle_ns), 0) AS idle_ns,
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
