-- GPU time per kind of activity (compute, communication, memory), as HolisticTraceAnalysis's
-- get_gpu_kernel_breakdown kernel-type table: the time during which at least one activity of
-- the type runs (its intervals merged per device, so concurrent kernels count once), summed
-- over devices, and its share of the time the devices were busy with any activity. Types
-- that overlap in time each count the overlap, so the shares can add up to more than 100.
-- Merged time in one pass: in start order, each interval adds to the union of those before it
-- the part after everything earlier has ended, max(0, finish - max(start, reached)).
WITH activity AS (
    SELECT deviceId, start, start + duration AS finish, type FROM KERNEL_DETAILS
),
reach AS (
    SELECT deviceId, start, finish, type,
           max(finish) OVER earlier AS reached,
           max(CASE WHEN type = 'Compute' THEN finish END) OVER earlier AS compute_reached,
           max(CASE WHEN type = 'Communication' THEN finish END) OVER earlier AS communication_reached,
           max(CASE WHEN type = 'Memory' THEN finish END) OVER earlier AS memory_reached
    FROM activity
    WINDOW earlier AS (PARTITION BY deviceId ORDER BY start ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
added AS (
    SELECT lower(type) AS type,
           max(finish - max(start, coalesce(CASE type WHEN 'Compute' THEN compute_reached
                                                      WHEN 'Communication' THEN communication_reached
                                                      ELSE memory_reached END, start)), 0) AS to_type,
           max(finish - max(start, coalesce(reached, start)), 0) AS to_any
    FROM reach
),
per_type AS (
    SELECT type, sum(to_type) AS total_ns FROM added GROUP BY type
)
SELECT type,
       total_ns,
       100.0 * total_ns / (SELECT sum(to_any) FROM added) AS pct
FROM per_type
ORDER BY total_ns DESC, type;
