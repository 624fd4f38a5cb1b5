#include "analysis/function_events.h"

#include <algorithm>
#include <array>

#include "analysis/op_tree.h"

namespace perfprof {
namespace {

// Ops torch.profiler leaves out of its function events (_filter_name in profiler_util.py).
constexpr std::array<std::string_view, 6> kDroppedOps = {
    "profiler::_record_function_enter", "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",  "aten::is_leaf",
    "aten::output_nr",                  "aten::_version",
};

FunctionEventKind kind_of(const TraceModel& model, size_t row, bool python_functions) {
  if (!python_functions && is_python_frame(model, row)) return FunctionEventKind::kNone;
  const std::string& name = model.str(model.ranges.name[row]);
  if (std::find(kDroppedOps.begin(), kDroppedOps.end(), name) != kDroppedOps.end()) return FunctionEventKind::kNone;
  return model.ranges.track[row] == model.ranges.end_track[row] ? FunctionEventKind::kNested : FunctionEventKind::kAsync;
}

// torch's nesting (_populate_cpu_children): walking a thread's events by begin, longest first,
// the parent of each is the innermost open event that contains it; open events that end before
// it begins, or before it ends, are closed. The ranges of a track are in that order already.
// Ranges that are no events get the innermost event containing them too (for their device
// work), closing none: to torch they do not exist.
void link_enclosing(const TraceModel& model, FunctionEvents& events) {
  const RangeTable& r = model.ranges;
  std::vector<size_t> open;  // innermost last
  uint32_t current_track = UINT32_MAX;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.track[i] != r.end_track[i]) continue;
    if (r.track[i] != current_track) {
      current_track = r.track[i];
      open.clear();
    }
    while (!open.empty() && r.begin_ns[i] >= r.end_ns[open.back()]) open.pop_back();
    if (events.kind[i] == FunctionEventKind::kNested) {
      while (!open.empty() && r.end_ns[i] > r.end_ns[open.back()]) open.pop_back();
      if (!open.empty()) events.enclosing[i] = static_cast<int64_t>(open.back());
      open.push_back(i);
    } else {
      const auto inside = std::find_if(open.rbegin(), open.rend(), [&](size_t e) { return r.end_ns[i] <= r.end_ns[e]; });
      if (inside != open.rend()) events.enclosing[i] = static_cast<int64_t>(*inside);
    }
  }
}

// The event `row` (an event or a range merged into one, or -1) is or is part of. A merged
// range's parent was settled at its turn: one step reaches an event.
int64_t event_of(const FunctionEvents& events, int64_t row) {
  return row >= 0 && events.kind[static_cast<size_t>(row)] == FunctionEventKind::kMerged ? events.parent[static_cast<size_t>(row)] : row;
}

// _remove_dup_nodes in one pass, parents before children: a child is merged when, at its turn,
// its parent (after the merges so far) has its name and no other child. Merging hands the
// child's children to the parent, so the parent's child count becomes the child's. Counts only
// change through a merge, which needs a single child, so later passes would find nothing new.
void merge_same_name_calls(const TraceModel& model, FunctionEvents& events) {
  const size_t n = events.kind.size();
  std::vector<uint32_t> children(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (events.kind[i] == FunctionEventKind::kNested && events.enclosing[i] >= 0) ++children[static_cast<size_t>(events.enclosing[i])];
  }
  for (size_t i = 0; i < n; ++i) {
    if (events.kind[i] != FunctionEventKind::kNested) continue;
    const int64_t parent = event_of(events, events.enclosing[i]);
    events.parent[i] = parent;
    if (parent < 0) continue;
    const auto p = static_cast<size_t>(parent);
    if (children[p] == 1 && event_name(model, i) == event_name(model, p)) {
      events.kind[i] = FunctionEventKind::kMerged;
      children[p] = children[i];
    }
  }
}

void add_times(const TraceModel& model, FunctionEvents& events) {
  const RangeTable& r = model.ranges;
  const size_t n = r.size();
  const std::vector<int64_t> launched = self_device_ns(model);
  for (size_t i = 0; i < n; ++i) {
    if (events.kind[i] == FunctionEventKind::kNested) {
      events.self_ns[i] = r.end_ns[i] - r.begin_ns[i];
      events.self_device_ns[i] += launched[i];
    } else if (events.kind[i] != FunctionEventKind::kAsync) {
      // Work launched inside a merged call, a left-out frame or op is its event's.
      const int64_t event = event_of(events, events.kind[i] == FunctionEventKind::kMerged ? events.parent[i] : events.enclosing[i]);
      if (event >= 0) events.self_device_ns[static_cast<size_t>(event)] += launched[i];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (events.kind[i] == FunctionEventKind::kNested && events.parent[i] >= 0) {
      events.self_ns[static_cast<size_t>(events.parent[i])] -= r.end_ns[i] - r.begin_ns[i];
    }
  }
  // Children follow their parents in row order: one backward pass completes each total before
  // it is added to the parent's.
  events.device_total_ns = events.self_device_ns;
  for (size_t i = n; i-- > 0;) {
    if (events.kind[i] == FunctionEventKind::kNested && events.parent[i] >= 0) {
      events.device_total_ns[static_cast<size_t>(events.parent[i])] += events.device_total_ns[i];
    }
  }
}

}  // namespace

std::string_view event_name(const TraceModel& model, size_t row) {
  return model.ranges.kind[row] == RangeKind::Step ? kProfilerStepsName : std::string_view(model.str(model.ranges.name[row]));
}

FunctionEvents build_function_events(const TraceModel& model, bool python_functions) {
  const size_t n = model.ranges.size();
  FunctionEvents events;
  events.kind.resize(n);
  for (size_t i = 0; i < n; ++i) events.kind[i] = kind_of(model, i, python_functions);
  events.enclosing.assign(n, -1);
  events.parent.assign(n, -1);
  events.self_ns.assign(n, 0);
  events.self_device_ns.assign(n, 0);
  link_enclosing(model, events);
  merge_same_name_calls(model, events);
  add_times(model, events);
  return events;
}

}  // namespace perfprof
