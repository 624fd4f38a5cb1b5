-- gpu_busy_time: per device, the time some GPU activity ran, and the time some activity of each
-- kind ran: HolisticTraceAnalysis's temporal breakdown, kernel-type breakdown and
-- communication/computation overlap are arithmetic on these unions (perfprof.analysis does it;
-- docs/analysis.md gives the formulas), so one pass over the activities serves all three.
--   span_ns                        first activity start to last activity end
--   busy_ns                        the union of every activity (kernels, copies, sets; all streams)
--   compute_ns, communication_ns,
--   memory_ns                      the union of the activities of that type (NULL: none ran)
--   compute_or_communication_ns    the union of compute and communication kernels together
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
           max(CASE WHEN type = 'Memory' THEN finish END) OVER earlier AS memory_reached,
           max(CASE WHEN type IN ('Compute', 'Communication') THEN finish END) OVER earlier AS either_reached
    FROM activity
    WINDOW earlier AS (PARTITION BY deviceId ORDER BY start ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
added AS (
    SELECT deviceId, start, finish, type,
           max(finish - max(start, coalesce(reached, start)), 0) AS to_any,
           max(finish - max(start, coalesce(CASE type WHEN 'Compute' THEN compute_reached
                                                      WHEN 'Communication' THEN communication_reached
                                                      ELSE memory_reached END, start)), 0) AS to_type,
           max(finish - max(start, coalesce(either_reached, start)), 0) AS to_either
    FROM reach
)
SELECT deviceId,
       max(finish) - min(start) AS span_ns,
       sum(to_any) AS busy_ns,
       sum(CASE WHEN type = 'Compute' THEN to_type END) AS compute_ns,
       sum(CASE WHEN type = 'Communication' THEN to_type END) AS communication_ns,
       sum(CASE WHEN type = 'Memory' THEN to_type END) AS memory_ns,
       sum(CASE WHEN type IN ('Compute', 'Communication') THEN to_either END) AS compute_or_communication_ns
FROM added
GROUP BY deviceId
ORDER BY deviceId;
