#include "analysis/op_tree.h"

#include <algorithm>
#include <unordered_map>

namespace perfprof {

bool is_device_work(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::Kernel:
    case GpuActivityKind::Memcpy:
    case GpuActivityKind::Memset:
    // With graph tracing on, CUPTI reports one record per graph launch instead of its kernels.
    case GpuActivityKind::GraphLaunch:
      return true;
    default:
      return false;
  }
}

bool is_python_frame(const TraceModel& model, size_t row) {
  return perfprof::is_python_frame(model.ranges.kind[row]);
}

bool is_nested(const TraceModel& model, size_t row) {
  return (model.ranges.flags[row] & kRangeAsync) == 0;
}

bool is_event(const TraceModel& model, size_t row) {
  return is_nested(model, row) && !is_python_frame(model, row);
}

OpTree build_op_tree(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  OpTree tree;
  tree.parent_event.assign(r.size(), -1);
  tree.parent_frame.assign(r.size(), -1);
  tree.self_ns.assign(r.size(), 0);

  std::vector<size_t> open;  // rows enclosing the current one, innermost last
  uint32_t current_track = UINT32_MAX;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_nested(model, i)) continue;
    if (r.track[i] != current_track) {
      current_track = r.track[i];
      open.clear();
    }
    while (!open.empty() && r.end_ns[open.back()] <= r.begin_ns[i]) open.pop_back();

    const int64_t duration = r.end_ns[i] - r.begin_ns[i];
    tree.self_ns[i] = duration;
    const bool frame = is_python_frame(model, i);
    if (!open.empty()) {
      const size_t parent = open.back();
      const bool parent_is_frame = is_python_frame(model, parent);
      const auto parent_row = static_cast<int64_t>(parent);
      tree.parent_event[i] = parent_is_frame ? tree.parent_event[parent] : parent_row;
      tree.parent_frame[i] = parent_is_frame ? parent_row : tree.parent_frame[parent];
      if (parent_is_frame) tree.self_ns[parent] -= duration;
      if (!frame && tree.parent_event[i] >= 0) tree.self_ns[tree.parent_event[i]] -= duration;
    }
    open.push_back(i);
  }
  return tree;
}

std::vector<int64_t> same_kind_parents(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::vector<int64_t> parent(r.size(), -1);
  std::vector<std::vector<size_t>> open;  // per kind, the rows enclosing the current one, innermost last
  uint32_t current_track = UINT32_MAX;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.track[i] != current_track) {
      current_track = r.track[i];
      open.clear();
    }
    const auto kind = static_cast<size_t>(r.kind[i]);
    if (open.size() <= kind) open.resize(kind + 1);
    std::vector<size_t>& around = open[kind];
    while (!around.empty() && r.end_ns[around.back()] <= r.begin_ns[i]) around.pop_back();
    if (!around.empty()) parent[i] = static_cast<int64_t>(around.back());
    around.push_back(i);
  }
  return parent;
}

// The tree holds every link needed; the model parameter keeps the analysis signatures uniform.
std::vector<size_t> call_stack_frames(const TraceModel& /*model*/, const OpTree& tree, size_t row) {
  std::vector<size_t> frames;
  for (int64_t f = tree.parent_frame[row]; f >= 0; f = tree.parent_frame[static_cast<size_t>(f)]) {
    frames.push_back(static_cast<size_t>(f));
  }
  return frames;
}

std::vector<int64_t> self_device_ns(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::unordered_map<uint64_t, size_t> row_of_id;
  row_of_id.reserve(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.id[i] != 0 && is_nested(model, i)) row_of_id.emplace(r.id[i], i);
  }
  std::vector<int64_t> device(r.size(), 0);
  const GpuTrace& gpu = model.gpu;
  const size_t linked = std::min(gpu.activities.size(), gpu.external_ids.size());
  for (size_t a = 0; a < linked; ++a) {
    const GpuActivity& activity = gpu.activities[a];
    if (!is_device_work(activity.kind) || gpu.external_ids[a] == 0) continue;
    const auto found = row_of_id.find(gpu.external_ids[a]);
    if (found != row_of_id.end()) device[found->second] += activity.end_ns - activity.start_ns;
  }
  return device;
}

}  // namespace perfprof
