-- kernel_launches: every asynchronous launch of GPU work with the runtime call that queued it,
-- HolisticTraceAnalysis's per-kernel launch frame (get_cuda_kernel_launch_stats).
--   cpu_duration_ns  how long the runtime call held its thread
--   gpu_duration_ns  how long the work ran on the device
--   launch_delay_ns  from the call's end to the work's start, 0 when the work started first
-- The calls are HTA's: cudaLaunchKernel, cudaLaunchKernelExC and, unless :include_memory is 0,
-- cudaMemcpyAsync and cudaMemsetAsync (synchronous copies would count the copy as launch cost).
WITH launch_calls AS (
    SELECT correlationId, start, "end"
    FROM CUPTI_ACTIVITY_KIND_RUNTIME
    WHERE nameId IN (SELECT id FROM StringIds
                     WHERE value IN ('cudaLaunchKernel', 'cudaLaunchKernelExC')
                        OR (coalesce(:include_memory, 1) AND value IN ('cudaMemcpyAsync', 'cudaMemsetAsync')))
),
gpu_work AS (
    SELECT k.deviceId, k.correlationId, k.start, k."end", names.value AS name
    FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS names ON names.id = k.demangledName
    UNION ALL
    -- Copies and sets carry no name; these are the names the Chrome trace gives them.
    SELECT deviceId, correlationId, start, "end",
           'Memcpy ' || CASE copyKind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA'
                                      WHEN 4 THEN 'AtoH' WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD'
                                      WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD' WHEN 9 THEN 'HtoH'
                                      WHEN 10 THEN 'PtoP' ELSE 'Unknown' END
    FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL
    SELECT deviceId, correlationId, start, "end", 'Memset (Device)' FROM CUPTI_ACTIVITY_KIND_MEMSET
)
SELECT work.deviceId,
       work.correlationId,
       work.name,
       calls."end" - calls.start AS cpu_duration_ns,
       work."end" - work.start AS gpu_duration_ns,
       max(work.start - calls."end", 0) AS launch_delay_ns
FROM launch_calls AS calls JOIN gpu_work AS work ON work.correlationId = calls.correlationId
ORDER BY work.start, work.correlationId;
