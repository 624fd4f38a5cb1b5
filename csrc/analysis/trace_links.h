#pragma once
// The ids and categories torch.profiler's traces give their events, as perfprof's Chrome trace
// writes them (export/chrome_trace.cpp) and prof.events() gives them (key_averages.h): one
// definition, so an event's "Python id", "External id", flows and category read the same in both.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

// Kineto's flow types.
inline constexpr uint8_t kForwardBackwardFlow = 1;  // "fwdbwd": a forward operator to its backward one
inline constexpr uint8_t kCpuToGpuFlow = 2;         // "ac2g": a CUDA API call to the GPU work it launched

// The end of a flow an event has: the flow's id and type, and whether it starts there (type 0:
// none).
struct FlowEnd {
  uint64_t id = 0;
  uint8_t type = 0;
  bool start = false;
};

// Python frames numbered from 1 in row order (per thread, in begin order), as torch.profiler
// numbers its python_function events ("Python id"); 0 for the other ranges.
std::vector<uint32_t> number_python_frames(const TraceModel& model);

// Range `row`'s "External id", which links a host range, the CUDA calls made inside it and the
// GPU work those launched (as in torch.profiler traces); 0 when GPU collection did not run.
uint64_t range_external_id(const TraceModel& model, size_t row);

// The id of the fwdbwd flow of model.forward_backward[link]: counted from 1.
inline uint64_t forward_backward_flow_id(size_t link) { return link + 1; }

// Per range: the fwdbwd flow it starts (a forward operator) or ends (a backward one), or the
// ac2g flow it starts (a CUDA API call that launched GPU work; its id is the correlation id).
std::vector<FlowEnd> range_flow_ends(const TraceModel& model);

// Per GPU activity: the ac2g flow it ends (work launched by a recorded CUDA API call).
std::vector<FlowEnd> activity_flow_ends(const TraceModel& model);

// The category ("cat") of a GPU activity, as torch.profiler names it.
std::string_view gpu_category(GpuActivityKind kind);

}  // namespace perfprof
