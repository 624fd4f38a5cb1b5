#include "analysis/kernel_details.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace perfprof {
namespace {

// For each correlation id of a CUDA API call, the innermost operator around that call: the op
// tree's events above it (Python frames skipped) up to the first PyTorch operator.
std::unordered_map<uint32_t, int64_t> launching_operators(const TraceModel& model, const OpTree& tree) {
  const RangeTable& r = model.ranges;
  std::unordered_map<uint32_t, int64_t> op_of_call;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.correlation[i] == 0) continue;
    int64_t up = tree.parent_event[i];
    while (up >= 0 && r.kind[static_cast<size_t>(up)] != RangeKind::CpuOp) up = tree.parent_event[static_cast<size_t>(up)];
    if (up >= 0) op_of_call.emplace(r.correlation[i], up);
  }
  return op_of_call;
}

}  // namespace

std::vector<KernelDetail> kernel_details(const AnalysedTrace& trace) {
  const TraceModel& model = trace.model();
  const std::unordered_map<uint32_t, int64_t> op_of_call = launching_operators(model, trace.tree());
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
    const auto op = op_of_call.find(activity.correlation);
    if (activity.correlation != 0 && op != op_of_call.end()) row.operator_row = op->second;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace perfprof
