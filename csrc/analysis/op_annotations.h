#pragma once
// Adds what torch.profiler's with_stack and with_flops put in an operator's args to the
// cpu_op ranges of a trace, so every exporter shows them.
#include "analysis/op_tree.h"
#include "trace/trace_model.h"

namespace perfprof {

// Rewrites model.ranges.args of cpu_op ranges, appending
//   "Call stack": "inner frame;...;outer frame"  when call_stacks and the op has Python frames
//                                                 around it (async ops have none),
//   "flops": N                                    when flops and flops_of() gives N > 0.
// New args texts are appended to model.strings, each distinct text once. `tree` must come from
// this model (only its frame links are read; the rewrite does not change them).
void annotate_ops(TraceModel& model, const OpTree& tree, bool call_stacks, bool flops);

}  // namespace perfprof
