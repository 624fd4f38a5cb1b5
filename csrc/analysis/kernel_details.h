#pragma once
// kernel_details: one row per GPU activity doing device work (kernels, memcpy, memset, graph
// launches), with what a reader wants beside its times: its type, how long its stream sat idle
// before it, its launch configuration and occupancy, and the call and operators that launched it.
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
  // The CUDA API call that launched it (same correlation id), as a row of TraceModel::ranges;
  // -1 when there is none (work of a process whose calls were not recorded).
  int64_t launch_row = -1;
  // The innermost and the outermost PyTorch operator (RangeKind::CpuOp) around that call on its
  // thread, as rows of TraceModel::ranges; -1 when there is none. The outermost is the operator
  // the user called (aten::linear), the innermost the one that launched (aten::addmm).
  int64_t operator_row = -1;
  int64_t root_operator_row = -1;
};

// In the model's order: by device, stream, start.
std::vector<KernelDetail> kernel_details(const AnalysedTrace& trace);

}  // namespace perfprof
