#pragma once
// The nesting of a trace's host ranges, split in two hierarchies the way torch.profiler sees
// them: events (operators, annotations, CUDA runtime calls, ...) and Python frames (category
// "python_function"). Async ranges do not nest and are left out of both.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

// One entry per row of model.ranges.
struct OpTree {
  // Innermost enclosing event on the same track, or -1. Python frames in between are skipped.
  std::vector<int64_t> parent_event;
  // Innermost enclosing Python frame on the same track, or -1.
  std::vector<int64_t> parent_frame;
  // Event: its duration minus the durations of the events whose parent_event it is (the frames
  // in between do not count; torch.profiler's self CPU time, which takes frames out too, is
  // FunctionEvents::self_ns in function_events.h).
  // Python frame: its duration minus the durations of its direct children, events and frames
  // alike (time spent in the frame's own Python code).
  // The self times of events partition the time covered by outermost events; adding frames'
  // would count twice a frame's own time inside an event (it is in both self times).
  // Async rows: 0 (they are not part of the tree).
  std::vector<int64_t> self_ns;
};

bool is_python_frame(const TraceModel& model, size_t row);
// Part of the tree: not async.
bool is_nested(const TraceModel& model, size_t row);
// An event: part of the tree and not a Python frame.
bool is_event(const TraceModel& model, size_t row);

// One pass over the ranges, which must be in the order build_trace leaves them: grouped by
// track, in begin order within a track, outer range first on equal begins, non-async ranges
// properly nested. A parent therefore always has a smaller row than its children.
OpTree build_op_tree(const TraceModel& model);

// Per row of model.ranges: the innermost range of the same kind around it on its track (an
// operator's calling operator, a Python function's caller), whatever ranges of other kinds lie
// in between; -1 for none. Each kind nests on its own here, async rows included: the Python
// calls that a record_function scope crosses are async in the one hierarchy of the OpTree, yet
// still nest among Python calls. Equal ranges nest in row order; one that ends where the next
// begins does not hold it.
std::vector<int64_t> same_kind_parents(const TraceModel& model);

// The Python frames enclosing `row` (not `row` itself), innermost first.
std::vector<size_t> call_stack_frames(const TraceModel& model, const OpTree& tree, size_t row);

// Kernels, memcpy, memset and graph launches: the activities that keep the device busy.
bool is_device_work(GpuActivityKind kind);

// Per range row: the summed durations of the GPU activities doing device work (is_device_work)
// whose external id is that row's range id. Rows of async ranges get nothing, so work launched
// inside one is left unattributed.
std::vector<int64_t> self_device_ns(const TraceModel& model);

}  // namespace perfprof
