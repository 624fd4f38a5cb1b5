-- One row per step and rank (DuckDB, over cluster_analysis.duckdb's tables): the rank's
-- STEP_TRACE_TIME row of that step, and its duration. Steps are matched across ranks by their
-- number (ProfilerStep#N), which every rank's schedule counts alike.
CREATE OR REPLACE VIEW rank_steps AS
SELECT step, TRY_CAST(step AS BIGINT) AS step_number, rank, run, start_ns, end_ns, end_ns - start_ns AS duration_ns,
       computing_ns, communication_not_overlapped_ns, overlapped_ns, communication_ns, free_ns, stage_ns, bubble_ns,
       communication_not_overlapped_exclude_receive_ns, preparing_ns
FROM steps;
