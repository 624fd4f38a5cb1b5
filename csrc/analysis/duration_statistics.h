#pragma once
// Duration statistics per name, as Nsight Systems' `nsys stats` reports give them:
//   op_statistic   kernels per name (cuda_gpu_kern_sum)
//   api_statistic  CUDA runtime and driver API calls per name (cuda_api_sum)
#include <cstdint>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

struct DurationStatistics {
  StringId name = kEmptyString;
  uint64_t count = 0;
  int64_t total_ns = 0;
  double percent = 0;  // total_ns / the summed total_ns of every row x 100
  double average_ns = 0;
  double median_ns = 0;  // the middle duration; the mean of the two middle ones for an even count
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double stdev_ns = 0;  // sample standard deviation (n - 1), as nsys's; 0 for one instance
};

// Rows by total time, longest first (then by name), as nsys lists them.
// Every kernel activity (GpuActivityKind::Kernel) of the trace, by name.
std::vector<DurationStatistics> kernel_statistics(const TraceModel& model);
// Every CUDA runtime or driver API call (RangeKind::CudaRuntime, CudaDriver), by name.
std::vector<DurationStatistics> api_statistics(const TraceModel& model);

}  // namespace perfprof
