#pragma once
// What ExperimentalConfig(gpu_metrics=GpuMetrics.X, l2_cache=...) collects per kernel: for each
// group, the CUPTI metrics (Nsight Compute's names) asked of the Range Profiler, and the columns
// exports write from their values. The one place this mapping lives; docs/gpu_metrics.md shows
// it as a table.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfprof {

// Mirrors python/perfprof/experimental_config.py's GpuMetrics, in its order.
enum class GpuMetricGroup : int {
  None = 0,
  PipeUtilization,
  ArithmeticUtilization,
  Memory,
  L2Cache,
  MemoryAccess,
  Occupancy,
};

inline constexpr GpuMetricGroup kGpuMetricGroups[] = {
    GpuMetricGroup::None,    GpuMetricGroup::PipeUtilization, GpuMetricGroup::ArithmeticUtilization,
    GpuMetricGroup::Memory,  GpuMetricGroup::L2Cache,         GpuMetricGroup::MemoryAccess,
    GpuMetricGroup::Occupancy,
};

// The Python enum's value: "GpuMetricsNone", "PipeUtilization", ...
const char* gpu_metric_group_name(GpuMetricGroup group);
std::optional<GpuMetricGroup> gpu_metric_group_from_name(std::string_view name);

// `weight` times the value of `metric`.
struct GpuMetricTerm {
  const char* metric;
  double weight;
};

// One export column: the sum of its terms. Most columns are one metric with weight 1; a FLOP
// count adds instruction counts, an FMA counting as two operations.
struct GpuMetricColumn {
  const char* name;         // as exports write it: "SM Throughput (%)"
  const char* description;  // what it measures
  std::vector<GpuMetricTerm> terms;
};

// The group's columns, in export order (none for None).
const std::vector<GpuMetricColumn>& gpu_metric_columns(GpuMetricGroup group);

// The column `l2_cache=True` adds: the L2 hit rate (also one of L2Cache's columns).
const GpuMetricColumn& l2_hit_rate_column();

// The base metric of a metric name, the part before its first '.': cuptiProfilerHostGetBaseMetrics
// lists a chip's metrics by it ("sm__throughput" for "sm__throughput.avg.pct_of_peak_sustained_elapsed").
std::string_view base_metric(std::string_view metric);

// The metrics one collection asks CUPTI for, and how each kernel's values become its columns.
class GpuMetricPlan {
 public:
  GpuMetricPlan(GpuMetricGroup group, bool l2_cache);

  // Every metric the columns use, once each, in the order the columns first use them.
  const std::vector<std::string>& metrics() const { return metrics_; }
  const std::vector<const GpuMetricColumn*>& columns() const { return columns_; }

  // The columns' values from one kernel's metric values (parallel to metrics()); a column whose
  // metric has no value is NaN.
  std::vector<double> column_values(const std::vector<double>& metric_values) const;

 private:
  void add(const GpuMetricColumn& column);

  std::vector<std::string> metrics_;
  std::vector<const GpuMetricColumn*> columns_;
  // Per column, its terms as (index into metrics_, weight).
  std::vector<std::vector<std::pair<size_t, double>>> terms_;
};

}  // namespace perfprof
