#pragma once
// The Python stacks torch.profiler's key_averages() groups by (group_by_stack_n; torch 2.13 keeps
// them with experimental_config verbose=True only): per event, the innermost Python frames
// around it, innermost first,
// - taken from where the event begins, as torch's recording tree (collection.cpp build_tree)
//   has them, not from the function-event tree: an event's caller is the innermost range open
//   on its thread when it begins, and a range ending closes the ranges begun inside it. So a
//   record_function range that begins inside the Python call entering it and outlives that
//   call has the call among its frames;
// - without torch.autograd's backward()/_make_grads frames (_filter_stack_entry);
// - for events inside a backward function (the autograd node's range, which the engine runs
//   directly inside "autograd::engine::evaluate_function: <node>"), the stack of the first
//   event, outside backward functions, with the node's sequence number
//   (_set_backward_stacktraces); none for a node without one (sequence number < 0).
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/function_events.h"
#include "trace/trace_model.h"

namespace perfprof {

class EventStacks {
 public:
  // At most `depth` frames per stack. `events` must outlive this.
  EventStacks(const TraceModel& model, const FunctionEvents& events, size_t depth);

  // The names of the frames of a listed event (is_listed), innermost first.
  std::vector<StringId> of_event(size_t row) const;

 private:
  bool is_backward_function(size_t row) const;
  std::vector<StringId> frames_around(size_t row) const;

  const TraceModel& model_;
  const FunctionEvents& events_;
  size_t depth_;
  std::vector<int64_t> caller_;             // per row: the innermost range open when it began, or -1
  std::vector<int64_t> backward_function_;  // per row: the backward function it runs in, or -1
  // sequence number -> the first event outside backward functions with it, and its position
  std::unordered_map<int64_t, std::pair<ListPosition, size_t>> first_of_sequence_;
};

}  // namespace perfprof
