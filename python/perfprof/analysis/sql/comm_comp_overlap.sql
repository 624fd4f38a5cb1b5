-- Communication/computation overlap per device, as HolisticTraceAnalysis's
-- get_comm_comp_overlap: the share of the time communication kernels run (their merged
-- intervals) during which some compute kernel runs too. The overlap comes from three interval
-- unions: |comm ∩ compute| = |comm| + |compute| - |comm ∪ compute|.
-- Merged time in one pass: in start order, each interval adds to the union of those before it
-- the part after everything earlier has ended, max(0, finish - max(start, reached)).
WITH activity AS (
    SELECT deviceId, start, start + duration AS finish, type FROM KERNEL_DETAILS
    WHERE type IN ('Communication', 'Compute')
),
reach AS (
    SELECT deviceId, start, finish, type,
           max(finish) OVER earlier AS reached,
           max(CASE WHEN type = 'Communication' THEN finish END) OVER earlier AS communication_reached,
           max(CASE WHEN type = 'Compute' THEN finish END) OVER earlier AS compute_reached
    FROM activity
    WINDOW earlier AS (PARTITION BY deviceId ORDER BY start ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
per_device AS (
    SELECT deviceId,
           sum(CASE WHEN type = 'Communication'
                    THEN max(finish - max(start, coalesce(communication_reached, start)), 0) ELSE 0 END)
               AS communication_ns,
           sum(CASE WHEN type = 'Compute'
                    THEN max(finish - max(start, coalesce(compute_reached, start)), 0) ELSE 0 END) AS compute_ns,
           sum(max(finish - max(start, coalesce(reached, start)), 0)) AS either_ns
    FROM reach GROUP BY deviceId
)
SELECT deviceId,
       communication_ns,
       communication_ns + compute_ns - either_ns AS overlapped_ns,
       100.0 * (communication_ns + compute_ns - either_ns) / communication_ns AS overlap_pct
FROM per_device
WHERE communication_ns > 0
ORDER BY deviceId;
