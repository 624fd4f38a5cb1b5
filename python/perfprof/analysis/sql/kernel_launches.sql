-- kernel_launches: every asynchronous launch of GPU work with the runtime call that queued it,
-- HolisticTraceAnalysis's per-kernel launch frame (get_cuda_kernel_launch_stats): the device
-- work of KERNEL_DETAILS with its launching call (the launch* columns).
--   cpu_duration_ns  how long the runtime call held its thread
--   gpu_duration_ns  how long the work ran on the device
--   launch_delay_ns  from the call's end to the work's start, 0 when the work started first
-- The calls are HTA's: cudaLaunchKernel, cudaLaunchKernelExC and, unless :include_memory is 0,
-- cudaMemcpyAsync and cudaMemsetAsync (synchronous copies would count the copy as launch cost).
-- kernel_launch_stats.sql summarises the same launches: keep the two in step.
SELECT work.deviceId,
       work.correlationId,
       names.value AS name,
       work.launchEnd - work.launchStart AS cpu_duration_ns,
       work.duration AS gpu_duration_ns,
       max(work.start - work.launchEnd, 0) AS launch_delay_ns
FROM KERNEL_DETAILS AS work JOIN StringIds AS names ON names.id = work.nameId
WHERE work.launchNameId IN (SELECT id FROM StringIds
                            WHERE value IN ('cudaLaunchKernel', 'cudaLaunchKernelExC')
                               OR (coalesce(:include_memory, 1) AND value IN ('cudaMemcpyAsync', 'cudaMemsetAsync')))
ORDER BY work.start, work.correlationId;
