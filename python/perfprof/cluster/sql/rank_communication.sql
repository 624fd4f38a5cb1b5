-- A rank's collective and point-to-point operations: its communication kernels when it has any
-- (a GPU job: the backend's host ranges are then only their launches), else the backends' host
-- ranges (gloo on CPU); each with the step it began in.
WITH chosen AS (
    SELECT CASE WHEN EXISTS (SELECT 1 FROM COMMUNICATION_OP WHERE source = 'device') THEN 'device' ELSE 'host' END
        AS source
)
SELECT names.value AS name, op.source, op.startNs, op.endNs, op.bytes, op.count,
       types.value AS dataType, op.peer,
       (SELECT step FROM STEP_TRACE_TIME s WHERE op.startNs >= s.startNs AND op.startNs < s.endNs) AS step
FROM COMMUNICATION_OP op
JOIN chosen ON op.source = chosen.source
JOIN StringIds names ON names.id = op.opName
LEFT JOIN StringIds types ON types.id = op.dataType
ORDER BY op.startNs;
