-- GPU time per kind of activity (compute, communication, memory), as HolisticTraceAnalysis's
-- get_gpu_kernel_breakdown kernel-type table: the time during which at least one activity of
-- the type runs (its intervals merged per device, so concurrent kernels count once), summed
-- over devices, and its share of the time the devices were busy with any activity. Types
-- that overlap in time each count the overlap, so the shares can add up to more than 100.
WITH activity AS (
    SELECT deviceId, start, start + duration AS finish, lower(type) AS scope FROM KERNEL_DETAILS
    UNION ALL
    SELECT deviceId, start, start + duration, 'any' FROM KERNEL_DETAILS
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
per_scope AS (
    SELECT scope, sum(finish - start) AS total_ns FROM islands GROUP BY scope
)
SELECT scope AS type,
       total_ns,
       100.0 * total_ns / (SELECT total_ns FROM per_scope WHERE scope = 'any') AS pct
FROM per_scope
WHERE scope != 'any'
ORDER BY total_ns DESC, type;
