-- Communication/computation overlap per device, as HolisticTraceAnalysis's
-- get_comm_comp_overlap: the share of the time communication kernels run (their merged
-- intervals) during which some compute kernel runs too. The overlap comes from three interval
-- unions: |comm ∩ compute| = |comm| + |compute| - |comm ∪ compute|.
WITH typed AS (
    SELECT deviceId, start, start + duration AS finish, type FROM KERNEL_DETAILS
    WHERE type IN ('Communication', 'Compute')
),
activity AS (
    SELECT deviceId, start, finish, type AS scope FROM typed
    UNION ALL
    SELECT deviceId, start, finish, 'either' FROM typed
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
           sum(CASE WHEN scope = 'Communication' THEN finish - start ELSE 0 END) AS communication_ns,
           sum(CASE WHEN scope = 'Compute' THEN finish - start ELSE 0 END) AS compute_ns,
           sum(CASE WHEN scope = 'either' THEN finish - start ELSE 0 END) AS either_ns
    FROM islands GROUP BY deviceId
)
SELECT deviceId,
       communication_ns,
       communication_ns + compute_ns - either_ns AS overlapped_ns,
       100.0 * (communication_ns + compute_ns - either_ns) / communication_ns AS overlap_pct
FROM per_device
WHERE communication_ns > 0
ORDER BY deviceId;
