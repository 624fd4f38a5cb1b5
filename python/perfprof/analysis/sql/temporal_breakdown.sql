-- Temporal breakdown per device, as HolisticTraceAnalysis's get_temporal_breakdown: the span
-- from the first GPU activity's start to the last one's end, split into compute time (some
-- compute kernel runs), non-compute time (only communication or memory work runs) and idle
-- time (nothing runs). Activity of all streams is merged into one busy timeline.
-- Merged time in one pass: in start order, each interval adds to the union of those before it
-- the part after everything earlier has ended, max(0, finish - max(start, reached)).
WITH activity AS (
    SELECT deviceId, start, start + duration AS finish, type = 'Compute' AS compute FROM KERNEL_DETAILS
),
reach AS (
    SELECT deviceId, start, finish, compute,
           max(finish) OVER earlier AS reached,
           max(CASE WHEN compute THEN finish END) OVER earlier AS compute_reached
    FROM activity
    WINDOW earlier AS (PARTITION BY deviceId ORDER BY start ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
per_device AS (
    SELECT deviceId,
           sum(max(finish - max(start, coalesce(reached, start)), 0)) AS busy_ns,
           sum(CASE WHEN compute THEN max(finish - max(start, coalesce(compute_reached, start)), 0) ELSE 0 END)
               AS compute_ns,
           max(finish) - min(start) AS total_ns
    FROM reach GROUP BY deviceId
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
