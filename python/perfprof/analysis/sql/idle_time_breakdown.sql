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
categorised AS (
    SELECT deviceId, streamId, idle_ns,
           CASE WHEN host_wait THEN 'host_wait'
                WHEN idle_ns < coalesce(:kernel_wait_threshold_ns, 30000) THEN 'kernel_wait'
                ELSE 'other' END AS category
    FROM gaps WHERE idle_ns IS NOT NULL
),
categories(category, position) AS (VALUES ('host_wait', 1), ('kernel_wait', 2), ('other', 3)),
streams AS (SELECT DISTINCT deviceId, streamId FROM activity),
per_category AS (
    SELECT deviceId, streamId, category, sum(idle_ns) AS idle_ns
    FROM categorised GROUP BY deviceId, streamId, category
),
every_category AS (
    SELECT s.deviceId, s.streamId, c.category, c.position, coalesce(p.idle_ns, 0) AS idle_ns
    FROM streams AS s CROSS JOIN categories AS c
    LEFT JOIN per_category AS p
        ON p.deviceId = s.deviceId AND p.streamId = s.streamId AND p.category = c.category
)
SELECT deviceId, streamId, category, idle_ns,
       100.0 * idle_ns / nullif(sum(idle_ns) OVER (PARTITION BY deviceId, streamId), 0) AS idle_pct
FROM every_category
ORDER BY deviceId, streamId, position;
