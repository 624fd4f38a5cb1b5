#pragma once
// step_trace_time: where each schedule step's time went on the device, in the columns of
// msprof-analyze's step_trace_time.csv (torch_npu), with GPU activities in the NPU's place.
//
// A step is its ProfilerStep#N range [begin, end) on the host; device time is counted where it
// falls inside that window (work running past a step's end counts in the next step). Over the
// device work of every device of the trace (is_device_work: kernels, memcpy, memset, graph
// launches), with C the union of compute kernels' times (device_work.h: kernels and graph
// launches that are not communication), M the union of communication kernels' (NCCL, RCCL) and
// A the union of all device work:
//   computing                     = |C ∩ step|
//   communication                 = |M ∩ step|
//   overlapped                    = |C ∩ M ∩ step|
//   communication_not_overlapped  = communication - overlapped
//   free                          = |step| - |A ∩ step|   (no device work at all)
//   preparing                     = first moment of A in the step - begin; |step| without any
//   bubble                        = 0: pipeline-parallel receive time, which needs the pipeline
//                                   stages (not recorded)
//   stage                         = |step| - bubble
//   communication_not_overlapped_exclude_receive = communication_not_overlapped (no receives
//                                   are told apart without pipeline stages)
// Copies (memcpy, memset) are device work but neither computing nor communication, so
// computing + communication_not_overlapped + free + (time only copies ran) = |step|.
//
// A trace without any device work (a CPU job: torch.distributed over gloo) has the host as its
// device (StepTimeSource::Host), over every thread: C is the union of the PyTorch operators'
// times (RangeKind::CpuOp) that are not communication, M the union of the ranges of
// torch.distributed's operations (host_collectives.h: c10d::allreduce_ where it is called,
// gloo:all_reduce for the whole exchange on gloo's thread, waiting for the other ranks included),
// and A = C ∪ M; the formulas are the same, so free is the time no operator and no communication
// ran (Python, data loading, sleeping).
//
// step_host_time adds (perfprof's; the run database has it, the CSV does not) where the host's
// time went, over every thread, with O the union of PyTorch operators' times (RangeKind::CpuOp)
// and G the union of garbage-collection pauses':
//   host_operators                = |O ∩ step|
//   host_gc                       = |G ∩ step| - |G ∩ O ∩ step|   (a pause with no operator running)
// The rest of the step, |step| - host_operators - host_gc, is Python, the profiler and waiting.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

struct StepTraceTime {
  std::string step;  // N of ProfilerStep#N
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t computing_ns = 0;
  int64_t communication_not_overlapped_ns = 0;
  int64_t overlapped_ns = 0;
  int64_t communication_ns = 0;
  int64_t free_ns = 0;
  int64_t stage_ns = 0;
  int64_t bubble_ns = 0;
  int64_t communication_not_overlapped_exclude_receive_ns = 0;
  int64_t preparing_ns = 0;
};

// What step_trace_time takes as the device: the GPUs, or the host when no device work was recorded.
enum class StepTimeSource : uint8_t { Device, Host };

StepTimeSource step_time_source(const TraceModel& model);

// "device", "host".
std::string_view step_time_source_name(StepTimeSource source);

// One row per ProfilerStep#N range, in begin order.
std::vector<StepTraceTime> step_trace_time(const TraceModel& model);

struct StepHostTime {
  int64_t host_operators_ns = 0;
  int64_t host_gc_ns = 0;
};

// One row per ProfilerStep#N range, in begin order (step_trace_time's).
std::vector<StepHostTime> step_host_time(const TraceModel& model);

}  // namespace perfprof
