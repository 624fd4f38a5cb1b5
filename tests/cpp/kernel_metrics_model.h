#pragma once
// One trace with per-kernel hardware metrics (GpuTrace::kernel_metrics), built by hand for the
// exporters' tests: each exporter must write the same values for the same kernels.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string_view>

#include "model_builder.h"
#include "trace/trace_model.h"

namespace perfprof::test {

namespace kernel_metrics_model {
inline constexpr uint32_t kDevice = 1;
inline constexpr uint32_t kStream = 7;
inline constexpr int64_t kUnixOffsetNs = 1'700'000'000'000'000'000;
inline constexpr const char* kSmThroughput = "SM Throughput (%)";
inline constexpr const char* kDramRead = "DRAM Read (bytes)";
inline constexpr const char* kDramWrite = "DRAM Write (bytes, \"all\")";  // needs escaping in JSON and CSV
}  // namespace kernel_metrics_model

// On one stream: "gemm" (correlation 21), measured: SM Throughput 87.5, DRAM Read not evaluated
// (NaN), DRAM Write 12345678901 (a byte count past 32 bits); a copy (22) and "relu" (23), not
// measured.
inline TraceModel measured_kernels() {
  using namespace kernel_metrics_model;
  ModelBuilder b;
  GpuActivity& gemm = b.gpu_work(1000, 1200, "gemm", kStream, 21);
  gemm.grid[0] = 80;
  gemm.grid[1] = gemm.grid[2] = 1;
  gemm.block[0] = 256;
  gemm.block[1] = gemm.block[2] = 1;
  b.gpu_work(1300, 1400, "Memcpy DtoH", kStream, 22, GpuActivityKind::Memcpy);
  b.gpu_work(1500, 1600, "relu", kStream, 23);
  TraceModel& model = b.mutable_model();
  model.unix_offset_ns = kUnixOffsetNs;
  for (GpuActivity& a : model.gpu.activities) a.device = kDevice;
  KernelMetricsTable& metrics = model.gpu.kernel_metrics;
  for (const std::string_view name : {kSmThroughput, kDramRead, kDramWrite}) {
    metrics.columns.push_back(static_cast<StringId>(model.strings.size()));
    model.strings.emplace_back(name);
  }
  metrics.row = {0, KernelMetricsTable::kNoRow, KernelMetricsTable::kNoRow};
  metrics.values = {87.5, std::numeric_limits<double>::quiet_NaN(), 12345678901.0};
  return b.model();
}

}  // namespace perfprof::test
