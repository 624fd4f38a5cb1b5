-- step_times: each schedule step (ProfilerStep#N) in step order, with its host time span.
SELECT id AS step, startNs AS start_ns, endNs AS end_ns, endNs - startNs AS duration_ns
FROM STEP_TIME
ORDER BY id;
