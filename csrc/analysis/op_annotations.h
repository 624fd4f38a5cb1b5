#pragma once
// What torch.profiler's with_flops adds to operators: their floating-point operation counts,
// derived once from their typed inputs and stored as a typed argument every exporter shows.
#include <cstddef>
#include <cstdint>

#include "trace/trace_model.h"

namespace perfprof {

// One key per distinct (operator name, args): flops are derived once per key, as operators
// repeat step after step.
inline uint64_t call_signature(StringId name, ArgSetId args) { return (uint64_t{name} << 32) | index_of(args); }

// The operations of range `row`: its ArgKey::Flops argument (annotate_flops gave it one, with
// with_flops; a torch.profiler trace carries torch's), else 0. Never derived from the inputs
// here: record_shapes without with_flops gives no FLOPs, as in torch.profiler.
uint64_t range_flops(const TraceModel& model, size_t row);

// Gives every cpu_op range whose flops_of() is N > 0 the argument ArgKey::Flops = N, after its
// other arguments. New argument sets are added to model.arg_sets, each distinct set once.
void annotate_flops(TraceModel& model);

}  // namespace perfprof
