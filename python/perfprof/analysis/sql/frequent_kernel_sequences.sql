-- frequent_kernel_sequences: the sequences of GPU work one host range launches most often, the
-- idea of HolisticTraceAnalysis's get_frequent_cuda_kernel_sequences.
-- The ranges: PyTorch operators (type op), or with :operator every host range whose name
-- contains it (HTA's operator_name; a record_function annotation is then found too). Only the
-- outermost of them count, so that a kernel is in one sequence: a range inside another such
-- range on its thread is not a root (HTA keeps the shallowest matches).
-- A root's sequence: the kernels, copies and sets launched by the CUDA calls that start inside
-- it, in the order they started on the device, joined with ' -> '; roots launching fewer than
-- :min_length (default 3, HTA's min_pattern_len) are left out. Sequences are counted per
-- operator name; total_ns is the device time of all their occurrences. The :top (default 5)
-- most frequent, then by operator and sequence (HTA's order).
WITH candidates AS (
    SELECT api.rowid AS id, api.globalTid, api.startNs, api.endNs, names.value AS operator
    FROM PYTORCH_API AS api JOIN StringIds AS names ON names.id = api.name
    WHERE CASE WHEN :operator IS NULL
               THEN api.type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op')
               ELSE instr(names.value, :operator) > 0 END
),
outermost AS (
    SELECT * FROM (
        SELECT *, max(endNs) OVER (PARTITION BY globalTid ORDER BY startNs, endNs DESC
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS enclosing_end
        FROM candidates)
    WHERE enclosing_end IS NULL OR startNs >= enclosing_end
),
-- Numbered in time order per thread: the largest number seen so far is the latest root.
roots AS (
    SELECT *, row_number() OVER (PARTITION BY globalTid ORDER BY startNs) AS ordinal FROM outermost
),
gpu_work AS (
    SELECT correlationId, start, "end", demangledName AS nameId, NULL AS name FROM CUPTI_ACTIVITY_KIND_KERNEL
    UNION ALL
    SELECT correlationId, start, "end", NULL,
           'Memcpy ' || CASE copyKind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA'
                                      WHEN 4 THEN 'AtoH' WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD'
                                      WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD' WHEN 9 THEN 'HtoH'
                                      WHEN 10 THEN 'PtoP' ELSE 'Unknown' END
    FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL
    SELECT correlationId, start, "end", NULL, 'Memset (Device)' FROM CUPTI_ACTIVITY_KIND_MEMSET
),
cuda_calls AS (
    SELECT globalTid, start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME
    UNION ALL
    SELECT globalTid, start, correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER
),
-- Roots on a thread do not overlap, so a call is in the last root that started before it, if
-- that root has not ended: roots and calls in one time order per thread find it.
timeline AS (
    SELECT globalTid, startNs AS time_ns, ordinal, NULL AS correlationId FROM roots
    UNION ALL
    SELECT globalTid, start, NULL, correlationId FROM cuda_calls
),
calls_in_roots AS (
    SELECT globalTid, correlationId, time_ns,
           max(ordinal) OVER (PARTITION BY globalTid ORDER BY time_ns, ordinal IS NULL
                              ROWS UNBOUNDED PRECEDING) AS ordinal
    FROM timeline
),
launched AS (
    SELECT roots.id AS root_id, roots.operator, work.start, work."end" - work.start AS gpu_ns,
           coalesce(work.name, (SELECT value FROM StringIds WHERE id = work.nameId)) AS name
    FROM calls_in_roots AS calls
    JOIN roots ON roots.globalTid = calls.globalTid AND roots.ordinal = calls.ordinal
                  AND calls.time_ns < roots.endNs
    JOIN gpu_work AS work ON work.correlationId = calls.correlationId
    WHERE calls.correlationId IS NOT NULL
),
sequences AS (
    SELECT root_id, operator,
           group_concat(name, ' -> ') OVER per_root AS sequence,
           count(*) OVER per_root AS length,
           sum(gpu_ns) OVER per_root AS gpu_ns,
           row_number() OVER (PARTITION BY root_id) AS nth
    FROM launched
    WINDOW per_root AS (PARTITION BY root_id ORDER BY start
                        ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
)
SELECT operator, sequence, length, count(*) AS count, sum(gpu_ns) AS total_ns
FROM sequences
WHERE nth = 1 AND length >= coalesce(:min_length, 3)
GROUP BY operator, sequence
ORDER BY count DESC, operator, sequence
LIMIT coalesce(:top, 5);
