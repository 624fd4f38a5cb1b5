-- frequent_kernel_sequences: the sequences of GPU work one host range launches most often, the
-- idea of HolisticTraceAnalysis's get_frequent_cuda_kernel_sequences.
-- The ranges: PyTorch operators (type op), or with :operator every host range whose name
-- contains it (HTA's operator_name; a record_function annotation is then found too). Only the
-- outermost of them count, so that a kernel is in one sequence: a range inside another such
-- range on its thread is not a root (HTA keeps the shallowest matches).
-- A root's sequence: the kernels, copies and sets (KERNEL_DETAILS) launched by the CUDA calls
-- that start inside it, in the order they started on the device, joined with ' -> '; roots
-- launching fewer than :min_length (default 3, HTA's min_pattern_len) are left out. Sequences
-- are counted per operator name; total_ns is the device time of all their occurrences. The
-- :top (default 5) most frequent, then by operator and sequence (HTA's order).
WITH candidates AS (
    SELECT api.id, api.globalTid, api.startNs, api.endNs
    FROM PYTORCH_API AS api JOIN StringIds AS names ON names.id = api.name
    WHERE :operator IS NOT NULL AND instr(names.value, :operator) > 0
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
-- Roots on a thread do not overlap, so a launch is in the last root that started before it, if
-- that root has not ended: roots and launches in one time order per thread find it.
timeline AS (
    SELECT globalTid, startNs AS time_ns, ordinal, NULL AS work FROM roots
    UNION ALL
    SELECT launchGlobalTid, launchStart, NULL, rowid FROM KERNEL_DETAILS
    WHERE :operator IS NOT NULL AND launchStart IS NOT NULL
),
launches_in_roots AS (
    SELECT globalTid, work, time_ns,
           max(ordinal) OVER (PARTITION BY globalTid ORDER BY time_ns, ordinal IS NULL
                              ROWS UNBOUNDED PRECEDING) AS ordinal
    FROM timeline
),
launched AS (
    -- PyTorch operators: each work's outermost operator is in its row (rootOperatorId)
    SELECT rootOperatorId AS root_id, start, duration, nameId FROM KERNEL_DETAILS
    WHERE :operator IS NULL AND rootOperatorId IS NOT NULL
    UNION ALL
    SELECT roots.id, work.start, work.duration, work.nameId
    FROM launches_in_roots AS launches
    JOIN roots ON roots.globalTid = launches.globalTid AND roots.ordinal = launches.ordinal
                  AND launches.time_ns < roots.endNs
    JOIN KERNEL_DETAILS AS work ON work.rowid = launches.work
),
-- Each root's sequence as its name ids (short texts: spelled out once per distinct sequence).
sequences AS (
    SELECT root_id,
           group_concat(nameId, ',') OVER per_root AS ids,
           count(*) OVER per_root AS length,
           sum(duration) OVER per_root AS gpu_ns,
           row_number() OVER in_root AS nth
    FROM launched
    WINDOW in_root AS (PARTITION BY root_id ORDER BY start),
           per_root AS (in_root ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
),
counted AS (
    SELECT api.name AS operatorId, s.ids, s.length, count(*) AS count, sum(s.gpu_ns) AS total_ns
    FROM sequences AS s JOIN PYTORCH_API AS api ON api.id = s.root_id
    WHERE s.nth = 1 AND s.length >= coalesce(:min_length, 3)
    GROUP BY api.name, s.ids
),
-- The names, one id at a time from the front of the list.
spelled(ids, rest, sequence) AS (
    SELECT ids, ids || ',', NULL FROM (SELECT DISTINCT ids FROM counted)
    UNION ALL
    SELECT ids, substr(rest, instr(rest, ',') + 1),
           coalesce(sequence || ' -> ', '')
               || (SELECT value FROM StringIds WHERE id = CAST(substr(rest, 1, instr(rest, ',') - 1) AS INTEGER))
    FROM spelled WHERE rest <> ''
)
SELECT names.value AS operator, spelled.sequence, c.length, c.count, c.total_ns
FROM counted AS c
JOIN spelled ON spelled.ids = c.ids AND spelled.rest = ''
JOIN StringIds AS names ON names.id = c.operatorId
ORDER BY c.count DESC, operator, spelled.sequence
LIMIT coalesce(:top, 5);
