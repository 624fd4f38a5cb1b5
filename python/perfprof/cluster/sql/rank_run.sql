-- A rank's run as perfprof cluster summarises it: its place in the job and what its step
-- breakdown measures (step_time_source: "device", the GPUs, or "host" for a job without device work).
SELECT
    CAST((SELECT value FROM META_DATA WHERE name = 'world_size') AS INTEGER) AS world_size,
    (SELECT value FROM META_DATA WHERE name = 'distributed_backend') AS backend,
    (SELECT value FROM META_DATA WHERE name = 'step_time_source') AS step_time_source,
    (SELECT count(*) FROM STEP_TRACE_TIME) AS steps,
    (SELECT count(*) FROM COMMUNICATION_OP) AS communication_ops;
