/* Control API of libperfprof_fake_cupti, the test double of libcupti.
 *
 * Tests drive the double through these functions (resolve them with dlsym, or load the library
 * with Python ctypes) next to the CUPTI entry points it implements. Every function is thread
 * safe. The fake_cupti_<api call> functions simulate one CUDA call made by the calling thread:
 * they produce the records real CUPTI would (only those of enabled kinds), store them in the
 * client's buffers and return the call's correlation id (a process-wide counter starting at 1).
 *
 * Timing of a simulated call: the API record starts at the double's clock (fake_cupti_now) and
 * lasts 2 us, or `duration_ns` where the function takes one for the call itself; device work
 * starts 1 us after the API record ends and after the previous work on its stream (one timeline
 * per device and stream, forgotten at a reset and when the timestamp clock changes), and lasts
 * `gpu_duration_ns` / `duration_ns`. The fake_cupti_<call>_at functions take explicit times
 * instead, for tests that construct a GPU timeline. */
#ifndef PERFPROF_FAKE_CUPTI_CONTROL_H
#define PERFPROF_FAKE_CUPTI_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define FAKE_CUPTI_API __attribute__((visibility("default")))
#else
#define FAKE_CUPTI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Back to the state of a freshly loaded library: no enabled kinds, no buffer callbacks, no
 * queued or undelivered records (their buffers are forgotten, not completed), no injected
 * failures, dropped counts, devices, timestamp callback or pending drops, the default version
 * and thread-id type, empty external-id stacks on every thread, every stream idle (a fresh GPU
 * timeline), node-level graph tracing, no records still running, and zeroed counters; for
 * per-kernel metrics, no chips, kernel values, host objects or range profilers, one pass for
 * any metrics and the profiler interface not initialised. Waits for a completion callback in
 * progress to return. Correlation ids keep counting. */
FAKE_CUPTI_API void fake_cupti_reset(void);

/* fake_cupti_reset, except that the client's buffer and timestamp callbacks and its thread-id
 * type stay registered: for tests of a client that registers them once per process (perfprof's
 * collector does, as CUPTI keeps them), run one after another in one process. */
FAKE_CUPTI_API void fake_cupti_reset_keeping_callbacks(void);

/* The version cuptiGetVersion reports (default CUPTI_API_VERSION of the headers built against).
 * Below 130000 (CUPTI 12.x: 22 is CUDA 12.4, 27 CUDA 12.9) records are written, read back and
 * sized (cuptiActivityGetStructSize with version 0) as CUPTI 12.x writes them: Kernel9, Memcpy5,
 * Memset4, Device5, Synchronization, Memory3, shorter prefixes of the current structs. Set it
 * before records are written. */
FAKE_CUPTI_API void fake_cupti_set_version(uint32_t version);

/* From now on the CUPTI entry point named `function_name` (e.g. "cuptiActivityEnable") returns
 * `result` (a CUptiResult) without doing anything. result 0 removes the failure.
 * "cuptiActivityEnable:<kind>" (e.g. "cuptiActivityEnable:8") refuses that activity kind alone. */
FAKE_CUPTI_API void fake_cupti_fail(const char* function_name, int result);

/* The double's clock: the registered timestamp callback, else CLOCK_REALTIME in ns. */
FAKE_CUPTI_API uint64_t fake_cupti_now(void);

/* Adds (or replaces, by id) a device. Enabling CUPTI_ACTIVITY_KIND_DEVICE emits one
 * CUpti_ActivityDevice6 per device; adding one while DEVICE is enabled emits its record. */
FAKE_CUPTI_API void fake_cupti_add_device(uint32_t id, const char* name, uint32_t sm_count,
                                          uint64_t global_memory_bytes, uint32_t cc_major,
                                          uint32_t cc_minor);

/* cudaLaunchKernel: EXTERNAL_CORRELATION records (one per kind with a non-empty stack on this
 * thread), a RUNTIME record and a kernel record (CONCURRENT_KERNEL, or KERNEL if only that is
 * enabled). grid and block are (grid_x,1,1) and (block_x,1,1). */
FAKE_CUPTI_API uint32_t fake_cupti_launch_kernel(const char* name, uint32_t device,
                                                 uint32_t context_id, uint32_t stream,
                                                 uint64_t gpu_duration_ns, uint32_t grid_x,
                                                 uint32_t block_x, uint16_t registers_per_thread,
                                                 int32_t static_shared, uint32_t dynamic_shared);

/* fake_cupti_launch_kernel at explicit times on the double's clock (fake_cupti_now): the
 * RUNTIME record spans [api_start_ns, api_start_ns + api_duration_ns), the kernel
 * [gpu_start_ns, gpu_start_ns + gpu_duration_ns), wherever that is (overlapping other work on
 * its stream too); the call returns at once. Work queued later on the stream by the functions
 * without _at starts after it. grid (128,1,1), block (256,1,1), 32 registers per thread, no
 * shared memory. */
FAKE_CUPTI_API uint32_t fake_cupti_launch_kernel_at(const char* name, uint32_t device,
                                                    uint32_t context_id, uint32_t stream,
                                                    uint64_t api_start_ns,
                                                    uint64_t api_duration_ns,
                                                    uint64_t gpu_start_ns,
                                                    uint64_t gpu_duration_ns);

/* cudaMemcpyAsync: external ids, RUNTIME and MEMCPY (copy_kind is a CUpti_ActivityMemcpyKind). */
FAKE_CUPTI_API uint32_t fake_cupti_memcpy(uint64_t bytes, uint8_t copy_kind, uint32_t device,
                                          uint32_t context_id, uint32_t stream,
                                          uint64_t gpu_duration_ns);

/* cudaMemsetAsync: external ids, RUNTIME and MEMSET (device memory). */
FAKE_CUPTI_API uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value, uint32_t device,
                                          uint32_t context_id, uint32_t stream,
                                          uint64_t gpu_duration_ns);

/* fake_cupti_memcpy and fake_cupti_memset at explicit times, as fake_cupti_launch_kernel_at. */
FAKE_CUPTI_API uint32_t fake_cupti_memcpy_at(uint64_t bytes, uint8_t copy_kind, uint32_t device,
                                             uint32_t context_id, uint32_t stream,
                                             uint64_t api_start_ns, uint64_t api_duration_ns,
                                             uint64_t gpu_start_ns, uint64_t gpu_duration_ns);
FAKE_CUPTI_API uint32_t fake_cupti_memset_at(uint64_t bytes, uint32_t value, uint32_t device,
                                             uint32_t context_id, uint32_t stream,
                                             uint64_t api_start_ns, uint64_t api_duration_ns,
                                             uint64_t gpu_start_ns, uint64_t gpu_duration_ns);

/* cuLaunchKernel, as Triton's kernels are launched: external ids, a DRIVER record (cbid
 * cuLaunchKernel) and the kernel record, with no RUNTIME record. grid (128,1,1), block (256,1,1). */
FAKE_CUPTI_API uint32_t fake_cupti_driver_launch_kernel(const char* name, uint32_t device,
                                                        uint32_t context_id, uint32_t stream,
                                                        uint64_t gpu_duration_ns);

/* A driver API call with callback id `cbid` (CUpti_driver_api_trace_cbid): external ids and a
 * DRIVER record lasting duration_ns; no device record. */
FAKE_CUPTI_API uint32_t fake_cupti_driver_call(uint32_t cbid, uint64_t duration_ns);

/* cudaStreamSynchronize lasting duration_ns: external ids, RUNTIME and a SYNCHRONIZATION record
 * (STREAM_SYNCHRONIZE) spanning the call. */
FAKE_CUPTI_API uint32_t fake_cupti_synchronize(uint32_t device, uint32_t context_id,
                                               uint32_t stream, uint64_t duration_ns);

/* cudaMalloc (is_free == 0) or cudaFree: external ids, RUNTIME and a MEMORY2 record
 * (ALLOCATION or RELEASE of device memory, timestamped at the call's start). */
FAKE_CUPTI_API uint32_t fake_cupti_malloc(uint64_t address, uint64_t bytes, uint32_t device,
                                          int is_free);

/* cudaGraphLaunch of a graph of `nodes` kernel nodes run one after another on `stream`, each
 * lasting node_duration_ns: external ids, RUNTIME, then as CUPTI traces graphs. Node-level (the
 * default): a kernel record per node, named "graph <graph_id> node <n>" (n from 1), with the
 * launch's correlation id, graphId and graphNodeId n. Graph-level, selected for good once
 * CUPTI_ACTIVITY_KIND_GRAPH_TRACE was enabled (until a reset or cuptiFinalize; disabling the
 * kind does not undo it, as cupti_activity.h says): no kernel record, and one GRAPH_TRACE record
 * spanning the nodes while that kind is enabled. */
FAKE_CUPTI_API uint32_t fake_cupti_graph_launch(uint32_t device, uint32_t context_id,
                                                uint32_t stream, uint32_t graph_id,
                                                uint32_t nodes, uint64_t node_duration_ns);

/* The next `count` kernel records are written still running: CUPTI's reader
 * (cuptiActivityGetNextRecord) returns CUPTI_ERROR_INVALID_KIND at each, as at an incomplete
 * record, until cuCtxSynchronize completes them. A forced flush before then hands their buffer
 * over as it is. */
FAKE_CUPTI_API void fake_cupti_set_in_flight(uint32_t count);

/* Another CUPTI client's session, as torch.profiler's Kineto runs one: it registers its own
 * buffer callbacks and a timestamp callback on CLOCK_REALTIME, enables kernel and runtime
 * records, launches one kernel (its records go to its own buffers), flushes, disables those
 * kinds, and with `finalize` calls cuptiFinalize (every callback forgotten). */
FAKE_CUPTI_API void fake_cupti_other_client_session(int finalize);

/* Buffer requests the client declines (NULL) abort the process when the version set is below 27
 * (CUDA 12.9), where real CUPTI may crash on them; from 27 on the records are dropped and
 * counted, as below. */

/* The next `count` records are dropped as if no buffer space were available; they are counted
 * by cuptiActivityGetNumDroppedRecords(NULL, ...). */
FAKE_CUPTI_API void fake_cupti_drop_next(uint32_t count);

/* `before` and `after` (either may be NULL) are called around each call of the client's buffer
 * completion callback, on the thread that makes it: a test can, say, make allocations fail
 * inside the client's handling of a buffer only. NULL, NULL removes them. */
FAKE_CUPTI_API void fake_cupti_set_completion_hooks(void (*before)(void), void (*after)(void));

/* Counters since the last reset: calls of the buffer request callback, calls of the completion
 * callback that have returned, and records in the buffers so completed. */
FAKE_CUPTI_API size_t fake_cupti_buffers_requested(void);
FAKE_CUPTI_API size_t fake_cupti_buffers_completed(void);
FAKE_CUPTI_API size_t fake_cupti_records_delivered(void);

/* Depth of the calling thread's external-correlation stack for `kind` (a
 * CUpti_ExternalCorrelationKind); -1 if kind is not a valid kind. */
FAKE_CUPTI_API int fake_cupti_external_stack_depth(int kind);

/* Per-kernel metrics: the Profiler Host and Range Profiler APIs (cupti_profiler_host.h,
 * cupti_range_profiler.h, with cupti_target.h and cupti_profiler_target.h). A CUcontext handle
 * N stands for context N, the context_id of fake_cupti_launch_kernel*. Each kernel launched on
 * a context while its range profiler is started is an auto range, numbered in launch order as
 * CUPTI numbers them; past the window's capacity (the counter data image's ranges, at most
 * maxRangesPerPass) a kernel is counted as a dropped range instead. One range profiler per
 * context; auto ranges only; kernel replay for any number of passes, user replay for one.
 * The target calls (chip name, counter availability, enable) need cuptiProfilerInitialize.
 * A params struct needs pPriv NULL and a structSize covering the fields the double reads, no
 * more: CUPTI accepts the shorter structs of older headers. */

/* CUDA device `device` has the chip `chip_name` (what cuptiDeviceGetChipName reports). */
FAKE_CUPTI_API void fake_cupti_set_device_chip(uint32_t device, const char* chip_name);

/* The chip `chip_name` has the base metric `base_metric` of type `metric_type` (a
 * CUpti_MetricType): cuptiProfilerHostGetBaseMetrics lists it under that type, and the host API
 * accepts every metric name "<base_metric>.<anything>" for the chip. */
FAKE_CUPTI_API void fake_cupti_add_chip_metric(const char* chip_name, int metric_type,
                                               const char* base_metric);

/* From now on each launch of kernel `kernel_name` measures `value` for the metric `metric` (the
 * full name, e.g. "dram__bytes_read.sum"); a value never set measures 0. */
FAKE_CUPTI_API void fake_cupti_set_kernel_metric(const char* kernel_name, const char* metric,
                                                 double value);

/* Config images schedule `count` metrics per pass, so cuptiProfilerHostGetNumOfPasses reports
 * ceil(metrics / count). 0 (the default): every metric in one pass. */
FAKE_CUPTI_API void fake_cupti_set_metrics_per_pass(size_t count);

/* The range mode (CUpti_ProfilerRange), replay mode (CUpti_ProfilerReplayMode) and
 * maxRangesPerPass of the last cuptiRangeProfilerSetConfig accepted; zeros if none. Any
 * pointer may be NULL. */
FAKE_CUPTI_API void fake_cupti_last_range_config(int* range, int* replay,
                                                 size_t* max_ranges_per_pass);

/* Whether cuptiProfilerInitialize is in effect (1) or not (0), and the host objects and range
 * profilers alive. Any pointer may be NULL. */
FAKE_CUPTI_API void fake_cupti_profiler_objects(int* initialized, size_t* host_objects,
                                                size_t* range_profilers);

/* The double also stands in for the CUDA driver that perfprof probes before using CUPTI
 * (point PERFPROF_CUDA_DRIVER_LIBRARY at this library): cuInit returns `init_result` and
 * cuDeviceGetCount reports `device_count`. Defaults: 0 (CUDA_SUCCESS) and 1 device. Not reset
 * by fake_cupti_reset. */
FAKE_CUPTI_API void fake_cupti_set_driver(int init_result, int device_count);

/* The context the calling thread uses, as the driver's cuCtxGetCurrent reports it (to every
 * thread): context id `context_id` (0: none) on CUDA device `device`, which cuptiGetDeviceId
 * reports for any context. cuCtxSynchronize succeeds while a context is current and counts its
 * calls (fake_cupti_context_synchronizations). Not reset by fake_cupti_reset. */
FAKE_CUPTI_API void fake_cupti_set_current_context(uint32_t context_id, uint32_t device);
FAKE_CUPTI_API uint64_t fake_cupti_context_synchronizations(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PERFPROF_FAKE_CUPTI_CONTROL_H */
