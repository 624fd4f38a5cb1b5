#pragma once
// Adds what torch.profiler's with_flops puts in an operator's args to the cpu_op ranges of a
// trace, so every exporter shows it.
#include "trace/trace_model.h"

namespace perfprof {

// Rewrites model.ranges.args of cpu_op ranges, appending "flops": N when flops_of() gives N > 0.
// New args texts are appended to model.strings, each distinct text once.
void annotate_flops(TraceModel& model);

}  // namespace perfprof
