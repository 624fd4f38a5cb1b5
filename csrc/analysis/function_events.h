#pragma once
// torch.profiler's function events of a trace's host ranges, nested as EventList._build_tree
// nests them (torch/autograd/profiler_util.py, torch 2.13), which is what its key_averages() and
// table count:
// - Every range is an event, except Python frames when they are left out and the helper ops
//   torch drops (profiler::_record_function_enter/_enter_new/_exit, aten::is_leaf,
//   aten::output_nr, aten::_version).
// - An event that begins and ends on one thread nests in the innermost event of that thread
//   containing it, Python frames included. One that overlaps another only partly is not nested
//   in it. An event ending on another thread is async: no parent, no children, no self time.
// - A nested call with its parent's name that is the parent's only child is merged into the
//   parent (_remove_dup_nodes), repeatedly: it is no event of its own any more, its children
//   become the parent's children and its time the parent's self time.
// - "ProfilerStep#N" ranges are all named "ProfilerStep*".
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

inline constexpr std::string_view kProfilerStepsName = "ProfilerStep*";

enum class FunctionEventKind : uint8_t {
  kNone,    // not an event
  kNested,  // an event in the tree
  kMerged,  // merged into its parent: not an event of its own
  kAsync,   // an event ending on another thread: outside the tree
};

// One entry per row of model.ranges.
struct FunctionEvents {
  std::vector<FunctionEventKind> kind;
  // The innermost kNested or kMerged range containing it on its thread (the tree before
  // merging), else -1; for kAsync ranges -1. kNone ranges have one too: their device work goes
  // to that event.
  std::vector<int64_t> enclosing;
  // kNested: the innermost kNested range containing it (its parent after merging), else -1.
  // kMerged: the range it was merged into.
  std::vector<int64_t> parent;
  // kNested: its duration minus its children's durations; else 0.
  std::vector<int64_t> self_ns;
  // kNested: the device work it launched itself (self_device_ns in op_tree.h) plus that of the
  // calls merged into it and of the kNone ranges whose enclosing event it is; else 0. torch replaces the parent's work with the merged call's
  // instead of adding it: the two differ only for a parent that launched work of its own besides
  // its one child, which a launch's runtime call (a second child) rules out.
  std::vector<int64_t> self_device_ns;
  // kNested: self_device_ns plus its children's device_total_ns; else 0.
  std::vector<int64_t> device_total_ns;
};

// An event of torch's list (kNested or kAsync).
inline bool is_listed(FunctionEventKind kind) { return kind == FunctionEventKind::kNested || kind == FunctionEventKind::kAsync; }

// Where an event stands in torch's list, which is sorted by begin, longer events first: begin,
// minus end, then the order it was seen in (the range row; other events count on from there).
using ListPosition = std::tuple<int64_t, int64_t, size_t>;
inline ListPosition list_position(const TraceModel& model, size_t row) {
  return {model.ranges.begin_ns[row], -model.ranges.end_ns[row], row};
}

// The name torch gives the range's event: its own, or kProfilerStepsName for a ProfilerStep#N.
std::string_view event_name(const TraceModel& model, size_t row);

// `python_functions`: Python frames (category python_function) are events; torch has them with
// with_stack=True. O(ranges + activities).
FunctionEvents build_function_events(const TraceModel& model, bool python_functions);

}  // namespace perfprof
