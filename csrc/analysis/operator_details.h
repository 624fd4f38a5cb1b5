#pragma once
// operator_details: PyTorch operators (RangeKind::CpuOp) per name and input shapes, with the host
// and device times torch.profiler's key_averages(group_by_input_shape=True) gives them.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

struct OperatorDetail {
  StringId name = kEmptyString;
  std::string input_shapes;  // input_shapes_text(): "[[8, 64], []]", or empty without shapes
  uint64_t count = 0;
  // Summed over the operator's function events (function_events.h), as key_averages sums them:
  int64_t host_total_ns = 0;    // durations
  int64_t host_self_ns = 0;     // FunctionEvents::self_ns
  int64_t device_total_ns = 0;  // FunctionEvents::device_total_ns
  int64_t device_self_ns = 0;   // FunctionEvents::self_device_ns
};

// One row per (name, input shapes), in the order of their first call. Operators torch merges
// into a caller of the same name, or leaves out, are not counted (as in key_averages).
std::vector<OperatorDetail> operator_details(const TraceModel& model);

}  // namespace perfprof
