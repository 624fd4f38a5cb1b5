-- step_time_breakdown: where each step's time went, on the host and on the GPUs.
-- Host parts, from a sweep over every thread of the run (backward operators of CUDA tensors run on
-- autograd's own threads), stacking up to duration_ns:
--   operators_ns: time inside the step when some operator (PYTORCH_API type 'op') ran;
--   gc_ns:        time when a GC pause (GC_RECORD) ran and no operator did;
--   other_ns:     duration_ns - operators_ns - gc_ns: Python, the profiler, waiting.
-- GPU parts, STEP_TRACE_TIME's (docs/formats/summaries.md), NULL in a run without device work;
-- computing_ns + communication_not_overlapped_ns + copy_only_ns + free_ns = duration_ns:
--   computing_ns:                    compute kernels ran;
--   communication_not_overlapped_ns: communication kernels ran and no compute kernel did;
--   copy_only_ns:                    only memory copies or sets ran;
--   free_ns:                         the devices did nothing;
--   overlapped_ns:                   compute and communication kernels ran at once (in computing_ns);
--   preparing_ns:                    from the step's start to its first device work.
WITH steps AS (
    SELECT id AS step, startNs AS s, endNs AS e, row_number() OVER (ORDER BY startNs) AS nth FROM STEP_TIME
),
operators AS (
    SELECT a.startNs AS s, a.endNs AS e
    FROM PYTORCH_API AS a JOIN ENUM_API_TYPE AS t ON t.id = a.type
    WHERE t.name = 'op'
),
-- Every start and end: what it changes in the running counts of operators, GC pauses and steps.
edges(time, ops, gcs, inside, starts) AS (
    SELECT s, 1, 0, 0, 0 FROM operators UNION ALL SELECT e, -1, 0, 0, 0 FROM operators
    UNION ALL SELECT startNs, 0, 1, 0, 0 FROM GC_RECORD UNION ALL SELECT endNs, 0, -1, 0, 0 FROM GC_RECORD
    UNION ALL SELECT s, 0, 0, 1, 1 FROM steps UNION ALL SELECT e, 0, 0, -1, 0 FROM steps
),
-- The time from each edge to the next, with the counts after it. Of the edges at one instant only
-- the last has a non-zero length, and it carries the counts after all of them.
segments AS (
    SELECT lead(time) OVER w - time AS ns, sum(ops) OVER w AS ops, sum(gcs) OVER w AS gcs,
           sum(inside) OVER w AS inside, sum(starts) OVER w AS nth
    FROM edges
    WINDOW w AS (ORDER BY time ROWS UNBOUNDED PRECEDING)
),
host AS (
    SELECT nth, sum(CASE WHEN ops > 0 THEN ns ELSE 0 END) AS operators_ns,
           sum(CASE WHEN ops = 0 AND gcs > 0 THEN ns ELSE 0 END) AS gc_ns
    FROM segments
    WHERE inside > 0
    GROUP BY nth
)
SELECT st.step, st.e - st.s AS duration_ns,
       h.operators_ns, h.gc_ns, st.e - st.s - h.operators_ns - h.gc_ns AS other_ns,
       g.computing AS computing_ns, g.communicationNotOverlapped AS communication_not_overlapped_ns,
       st.e - st.s - g.computing - g.communicationNotOverlapped - g.free AS copy_only_ns, g.free AS free_ns,
       g.overlapped AS overlapped_ns, g.preparing AS preparing_ns
FROM steps AS st
JOIN host AS h USING (nth)
LEFT JOIN STEP_TRACE_TIME AS g ON g.step = CAST(st.step AS TEXT) AND EXISTS (SELECT 1 FROM KERNEL_DETAILS)
ORDER BY st.step;
