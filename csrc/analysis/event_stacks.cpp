#include "analysis/event_stacks.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "analysis/op_tree.h"

namespace perfprof {
namespace {

constexpr std::string_view kEvaluateFunctionPrefix = "autograd::engine::evaluate_function: ";

// Frames torch.profiler leaves out of stacks (_filter_stack_entry in profiler_util.py): both
// words of a pair appear in the frame's name.
bool dropped_frame(std::string_view frame) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kDropped = {{
      {"autograd/__init__", "_make_grads"},
      {"autograd/__init__", "backward"},
      {"torch/tensor", "backward"},
      {"_internal/common_utils", "prof_callable"},
      {"_internal/common_utils", "prof_func_call"},
      {"_internal/common_utils", "prof_meth_call"},
  }};
  return std::any_of(kDropped.begin(), kDropped.end(), [&](const auto& words) {
    return frame.find(words.first) != std::string_view::npos && frame.find(words.second) != std::string_view::npos;
  });
}

// Per row: the innermost range open on its track when it begins, or -1. A range closes at its
// end or at its caller's close, whichever comes first.
std::vector<int64_t> callers(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::vector<int64_t> caller(r.size(), -1);
  std::vector<std::pair<size_t, int64_t>> open;  // row and when it closes, innermost last
  uint32_t current_track = UINT32_MAX;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.track[i] != current_track) {
      current_track = r.track[i];
      open.clear();
    }
    // Closing times never grow towards the innermost: the closed ranges are on top.
    while (!open.empty() && open.back().second <= r.begin_ns[i]) open.pop_back();
    if (!open.empty()) caller[i] = static_cast<int64_t>(open.back().first);
    const int64_t closes = open.empty() ? r.end_ns[i] : std::min(r.end_ns[i], open.back().second);
    if (r.end_ns[i] > r.begin_ns[i]) open.emplace_back(i, closes);
  }
  return caller;
}

}  // namespace

EventStacks::EventStacks(const TraceModel& model, const FunctionEvents& events, size_t depth)
    : model_(model), events_(events), depth_(depth), caller_(callers(model)), backward_function_(model.ranges.size(), -1) {
  const RangeTable& r = model.ranges;
  // Parents come before their children: each inherits its parent's backward function.
  for (size_t i = 0; i < r.size(); ++i) {
    if (events.kind[i] != FunctionEventKind::kNested) continue;
    const int64_t parent = events.parent[i];
    if (is_backward_function(i)) {
      backward_function_[i] = static_cast<int64_t>(i);
    } else if (parent >= 0) {
      backward_function_[i] = backward_function_[static_cast<size_t>(parent)];
    }
  }
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_listed(events.kind[i]) || backward_function_[i] >= 0) continue;
    const ListPosition position = list_position(model, i);
    const auto [found, inserted] = first_of_sequence_.try_emplace(r.sequence[i], position, i);
    if (!inserted && position < found->second.first) found->second = {position, i};
  }
}

std::vector<StringId> EventStacks::of_event(size_t row) const {
  const int64_t backward = backward_function_[row];
  if (backward < 0) return frames_around(row);
  const int64_t sequence = model_.ranges.sequence[static_cast<size_t>(backward)];
  const auto found = first_of_sequence_.find(sequence);
  if (sequence < 0 || found == first_of_sequence_.end()) return {};
  return frames_around(found->second.second);
}

bool EventStacks::is_backward_function(size_t row) const {
  const int64_t enclosing = events_.enclosing[row];
  if (enclosing < 0) return false;
  const std::string_view outer = model_.str(model_.ranges.name[static_cast<size_t>(enclosing)]);
  const std::string_view name = model_.str(model_.ranges.name[row]);
  return outer.size() == kEvaluateFunctionPrefix.size() + name.size() &&
         outer.substr(0, kEvaluateFunctionPrefix.size()) == kEvaluateFunctionPrefix &&
         outer.substr(kEvaluateFunctionPrefix.size()) == name;
}

std::vector<StringId> EventStacks::frames_around(size_t row) const {
  std::vector<StringId> frames;
  for (int64_t c = caller_[row]; c >= 0 && frames.size() < depth_; c = caller_[static_cast<size_t>(c)]) {
    const auto outer = static_cast<size_t>(c);
    if (events_.kind[outer] != FunctionEventKind::kNone && is_python_frame(model_, outer) &&
        !dropped_frame(model_.str(model_.ranges.name[outer]))) {
      frames.push_back(model_.ranges.name[outer]);
    }
  }
  return frames;
}

}  // namespace perfprof
