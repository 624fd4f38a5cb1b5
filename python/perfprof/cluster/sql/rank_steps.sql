-- A rank's steps: STEP_TRACE_TIME's breakdown (msprof-analyze's step_trace_time columns).
SELECT step, startNs, endNs, computing, communicationNotOverlapped, overlapped, communication, free, stage, bubble,
       communicationNotOverlappedExcludeReceive, preparing
FROM STEP_TRACE_TIME
ORDER BY startNs;
