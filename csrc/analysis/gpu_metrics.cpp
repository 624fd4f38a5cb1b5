#include "analysis/gpu_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "analysis/occupancy.h"

namespace perfprof {
namespace {

const GpuDevice* device_of(const TraceModel& model, uint32_t id) {
  for (const GpuDevice& device : model.gpu.devices) {
    if (device.id == id) return &device;
  }
  return nullptr;
}

void add_kernel_metrics(GpuMetrics& metrics, size_t i, const GpuActivity& kernel, const GpuDevice& device) {
  if (device.sm_count == 0) return;
  const double blocks = double(kernel.grid[0]) * kernel.grid[1] * kernel.grid[2];
  const double threads = double(kernel.block[0]) * kernel.block[1] * kernel.block[2];
  const double warps = std::ceil(threads / std::max(device.warp_size, 1u));
  metrics.blocks_per_sm[i] = blocks / device.sm_count;
  metrics.warps_per_sm[i] = blocks * warps / device.sm_count;
  metrics.occupancy_percent[i] = theoretical_occupancy(kernel, device);
}

}  // namespace

GpuMetrics gpu_metrics(const TraceModel& model) {
  const std::vector<GpuActivity>& activities = model.gpu.activities;
  GpuMetrics metrics;
  for (auto* column : {&metrics.blocks_per_sm, &metrics.warps_per_sm, &metrics.occupancy_percent,
                       &metrics.bandwidth_gb_per_s}) {
    column->resize(activities.size());
  }
  for (size_t i = 0; i < activities.size(); ++i) {
    const GpuActivity& a = activities[i];
    if (a.kind == GpuActivityKind::Kernel) {
      if (const GpuDevice* device = device_of(model, a.device)) add_kernel_metrics(metrics, i, a, *device);
    } else if (a.kind == GpuActivityKind::Memcpy) {
      const int64_t duration = std::max<int64_t>(a.end_ns - a.start_ns, 1);
      metrics.bandwidth_gb_per_s[i] = double(a.bytes) / double(duration);
    }
  }
  return metrics;
}

}  // namespace perfprof
