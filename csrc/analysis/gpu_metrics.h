#pragma once
// What is derived once from each GPU activity, for every exporter and summary to read typed
// rather than each working it out again: a kernel's blocks and warps per SM and theoretical
// occupancy (with its device's limits), a copy's bandwidth.
#include <optional>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

// One entry per activity of TraceModel::gpu.activities; nothing where a metric does not apply
// (another kind of activity) or cannot be known (a device without its limits).
struct GpuMetrics {
  std::vector<std::optional<double>> blocks_per_sm;      // kernels: grid blocks / SMs
  std::vector<std::optional<double>> warps_per_sm;       // kernels: blocks x warps per block / SMs
  std::vector<std::optional<double>> occupancy_percent;  // kernels: theoretical occupancy (0-100)
  std::vector<std::optional<double>> bandwidth_gb_per_s;  // copies: bytes per nanosecond
};

GpuMetrics gpu_metrics(const TraceModel& model);

}  // namespace perfprof
