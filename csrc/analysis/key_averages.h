#pragma once
// torch.profiler's key_averages(): the events of a trace (every non-async range that is not a
// Python frame) aggregated by name, optionally split by input shapes and call stack.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/op_tree.h"
#include "trace/trace_model.h"

namespace perfprof {

struct KeyAverageOptions {
  // Split rows by the "Input Dims" text of the args (events without one form their own group).
  bool group_by_input_shape = false;
  // Split rows by the innermost N Python frames around the event (0: no split).
  int group_by_stack_n = 0;
};

struct KeyAverageRow {
  std::string name;
  std::string input_shapes;  // the "Input Dims" value text when grouping by it, else empty
  std::string stack;         // the innermost N frame names, innermost first, joined by "\n"
                             // when grouping by stack, else empty
  uint64_t count = 0;
  int64_t cpu_total_ns = 0;     // summed durations (a recursive event counts at every level)
  int64_t self_cpu_ns = 0;      // summed OpTree::self_ns
  // Device work (see self_device_ns in op_tree.h) launched inside the event or any event
  // nested in it, counted once for each event it is inside.
  int64_t device_total_ns = 0;
  int64_t self_device_ns = 0;   // device work whose innermost launching range is the event
  uint64_t flops = 0;           // summed flops_of(name, args)
};

// One row per key, in the order keys first appear in model.ranges. O(ranges + activities)
// (plus the frames walked per event when grouping by stack).
std::vector<KeyAverageRow> key_averages(const TraceModel& model, const OpTree& tree,
                                        const KeyAverageOptions& options);

}  // namespace perfprof
