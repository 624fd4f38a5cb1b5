#include "analysis/kernel_details.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace perfprof {
namespace {

// What launched the work of one correlation id: the CUDA API call and the operators around it.
struct Launch {
  int64_t call = -1;
  int64_t innermost_operator = -1;
  int64_t outermost_operator = -1;
};

// For each correlation id of a CUDA API call, the call and the operators around it: the op
// tree's events above it (Python frames skipped) that are PyTorch operators.
std::unordered_map<uint32_t, Launch> launches(const TraceModel& model, const OpTree& tree) {
  const RangeTable& r = model.ranges;
  std::unordered_map<uint32_t, Launch> by_correlation;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.correlation[i] == 0) continue;
    Launch launch;
    launch.call = static_cast<int64_t>(i);
    for (int64_t up = tree.parent_event[i]; up >= 0; up = tree.parent_event[static_cast<size_t>(up)]) {
      if (r.kind[static_cast<size_t>(up)] != RangeKind::CpuOp) continue;
      if (launch.innermost_operator < 0) launch.innermost_operator = up;
      launch.outermost_operator = up;
    }
    by_correlation.emplace(r.correlation[i], launch);
  }
  return by_correlation;
}

}  // namespace

std::vector<KernelDetail> kernel_details(const AnalysedTrace& trace) {
  const TraceModel& model = trace.model();
  const std::unordered_map<uint32_t, Launch> launch_of = launches(model, trace.tree());
  const std::vector<GpuActivity>& activities = model.gpu.activities;
  std::vector<KernelDetail> rows;
  // Activities are sorted by device, stream and start, so each stream's come together: until
  // when the current stream has been busy, and which stream that is.
  int64_t busy_until = 0;
  const GpuActivity* stream_first = nullptr;
  for (size_t a = 0; a < activities.size(); ++a) {
    const GpuActivity& activity = activities[a];
    if (!is_device_work(activity.kind)) continue;
    KernelDetail row;
    row.activity = a;
    row.name = activity.name;
    row.type = device_work_type(model, activity);
    row.device = activity.device;
    row.stream = activity.stream;
    row.start_ns = activity.start_ns;
    row.duration_ns = activity.end_ns - activity.start_ns;
    if (stream_first != nullptr && stream_first->device == activity.device && stream_first->stream == activity.stream) {
      row.wait_ns = std::max<int64_t>(0, activity.start_ns - busy_until);
      busy_until = std::max(busy_until, activity.end_ns);
    } else {
      stream_first = &activity;
      busy_until = activity.end_ns;
    }
    if (activity.kind == GpuActivityKind::Kernel) {
      std::copy(std::begin(activity.grid), std::end(activity.grid), row.grid.begin());
      std::copy(std::begin(activity.block), std::end(activity.block), row.block.begin());
      row.occupancy_percent = trace.gpu_metrics().occupancy_percent[a];
    }
    const auto launch = launch_of.find(activity.correlation);
    if (activity.correlation != 0 && launch != launch_of.end()) {
      row.launch_row = launch->second.call;
      row.operator_row = launch->second.innermost_operator;
      row.root_operator_row = launch->second.outermost_operator;
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace perfprof
