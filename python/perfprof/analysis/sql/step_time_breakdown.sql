-- step_time_breakdown: where each step's time went, on the host and on the GPUs: the columns of
-- STEP_TRACE_TIME (docs/formats/summaries.md), one row per step of STEP_TIME.
-- Host parts, over every thread of the run (backward operators of CUDA tensors run on autograd's
-- own threads), stacking up to duration_ns:
--   operators_ns: time inside the step when some operator (PYTORCH_API type 'op') ran;
--   gc_ns:        time when a GC pause (GC_RECORD) ran and no operator did;
--   other_ns:     duration_ns - operators_ns - gc_ns: Python, the profiler, waiting.
-- GPU parts, NULL in a run without device work;
-- computing_ns + communication_not_overlapped_ns + copy_only_ns + free_ns = duration_ns:
--   computing_ns:                    compute kernels ran;
--   communication_not_overlapped_ns: communication kernels ran and no compute kernel did;
--   copy_only_ns:                    only memory copies or sets ran;
--   free_ns:                         the devices did nothing;
--   overlapped_ns:                   compute and communication kernels ran at once (in computing_ns);
--   preparing_ns:                    from the step's start to its first device work.
-- STEP_TRACE_TIME counts device time from 0 without device work: `device` is 1 with some, else
-- NULL, and multiplies the GPU columns.
WITH device(present) AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM KERNEL_DETAILS) THEN 1 END)
SELECT st.id AS step, st.endNs - st.startNs AS duration_ns,
       g.hostOperators AS operators_ns, g.hostGc AS gc_ns,
       st.endNs - st.startNs - g.hostOperators - g.hostGc AS other_ns,
       d.present * g.computing AS computing_ns,
       d.present * g.communicationNotOverlapped AS communication_not_overlapped_ns,
       d.present * (st.endNs - st.startNs - g.computing - g.communicationNotOverlapped - g.free) AS copy_only_ns,
       d.present * g.free AS free_ns,
       d.present * g.overlapped AS overlapped_ns,
       d.present * g.preparing AS preparing_ns
FROM STEP_TIME AS st
JOIN STEP_TRACE_TIME AS g ON g.startNs = st.startNs AND g.endNs = st.endNs
CROSS JOIN device AS d
ORDER BY st.startNs;
