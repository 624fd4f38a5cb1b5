#pragma once
// kernel_details: one row per GPU activity doing device work (kernels, memcpy, memset, graph
// launches), with what a reader wants beside its times: its type, how long its stream sat idle
// before it, its launch configuration and occupancy, and the operator that launched it.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/analysed_trace.h"
#include "analysis/device_work.h"

namespace perfprof {

struct KernelDetail {
  size_t activity = 0;  // index into TraceModel::gpu.activities
  StringId name = kEmptyString;
  DeviceWorkType type = DeviceWorkType::Compute;
  uint32_t device = 0;
  uint32_t stream = 0;
  int64_t start_ns = 0;  // now_ns() clock, as the model's
  int64_t duration_ns = 0;
  // How long its stream was idle before it: from the end of the device work before it on the
  // same device and stream (the latest end among them) to its start; 0 for the first on its
  // stream, or when it starts before that end.
  int64_t wait_ns = 0;
  std::array<uint32_t, 3> grid{};   // kernels; zeros otherwise
  std::array<uint32_t, 3> block{};
  std::optional<double> occupancy_percent;  // gpu_metrics(): theoretical occupancy
  // The innermost PyTorch operator (RangeKind::CpuOp) around the CUDA API call that launched
  // it (same correlation id), as a row of TraceModel::ranges; -1 when there is none.
  int64_t operator_row = -1;
};

// In the model's order: by device, stream, start.
std::vector<KernelDetail> kernel_details(const AnalysedTrace& trace);

}  // namespace perfprof
