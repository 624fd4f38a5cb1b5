-- Temporal breakdown per device, as HolisticTraceAnalysis's get_temporal_breakdown: the span
-- from the first GPU activity's start to the last one's end, split into compute time (some
-- compute kernel runs), non-compute time (only communication or memory work runs) and idle
-- time (nothing runs). Activity of all streams is merged into one busy timeline.
WITH activity AS (
    SELECT deviceId, start, start + duration AS finish, 'all' AS scope FROM KERNEL_DETAILS
    UNION ALL
    SELECT deviceId, start, start + duration, 'compute' FROM KERNEL_DETAILS WHERE type = 'Compute'
),
-- Islands of overlapping intervals: a new one begins where an interval starts after every
-- earlier one (in start order) has ended.
reach AS (
    SELECT deviceId, scope, start, finish,
           max(finish) OVER (PARTITION BY deviceId, scope ORDER BY start, finish
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
    FROM activity
),
numbered AS (
    SELECT deviceId, scope, start, finish,
           sum(reached IS NULL OR start > reached) OVER (PARTITION BY deviceId, scope ORDER BY start, finish
                                                         ROWS UNBOUNDED PRECEDING) AS island
    FROM reach
),
islands AS (
    SELECT deviceId, scope, min(start) AS start, max(finish) AS finish
    FROM numbered GROUP BY deviceId, scope, island
),
per_device AS (
    SELECT deviceId,
           sum(CASE WHEN scope = 'all' THEN finish - start ELSE 0 END) AS busy_ns,
           sum(CASE WHEN scope = 'compute' THEN finish - start ELSE 0 END) AS compute_ns,
           max(finish) - min(start) AS total_ns
    FROM islands GROUP BY deviceId
)
SELECT deviceId,
       compute_ns,
       busy_ns - compute_ns AS non_compute_ns,
       total_ns - busy_ns AS idle_ns,
       total_ns,
       100.0 * compute_ns / nullif(total_ns, 0) AS compute_pct,
       100.0 * (busy_ns - compute_ns) / nullif(total_ns, 0) AS non_compute_pct,
       100.0 * (total_ns - busy_ns) / nullif(total_ns, 0) AS idle_pct
FROM per_device
ORDER BY deviceId;
