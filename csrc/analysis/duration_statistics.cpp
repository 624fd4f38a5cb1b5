#include "analysis/duration_statistics.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace perfprof {
namespace {

DurationStatistics statistics_of(StringId name, std::vector<int64_t>& durations) {
  std::sort(durations.begin(), durations.end());
  DurationStatistics row;
  row.name = name;
  row.count = durations.size();
  for (int64_t d : durations) row.total_ns += d;
  row.average_ns = static_cast<double>(row.total_ns) / static_cast<double>(row.count);
  const size_t middle = durations.size() / 2;
  row.median_ns = durations.size() % 2 == 1 ? static_cast<double>(durations[middle])
                                            : (durations[middle - 1] + durations[middle]) / 2.0;
  row.min_ns = durations.front();
  row.max_ns = durations.back();
  if (row.count > 1) {
    double squares = 0;
    for (int64_t d : durations) squares += (d - row.average_ns) * (d - row.average_ns);
    row.stdev_ns = std::sqrt(squares / static_cast<double>(row.count - 1));
  }
  return row;
}

// Statistics of each name's durations, longest total first. Grouped by text, not by id: a
// name may be interned twice (by the recorder and by the builder).
std::vector<DurationStatistics> by_name(const TraceModel& model, const std::vector<std::pair<StringId, int64_t>>& calls) {
  std::unordered_map<std::string_view, std::pair<StringId, std::vector<int64_t>>> durations;
  for (const auto& [name, duration] : calls) {
    durations.try_emplace(model.str(name), name, std::vector<int64_t>{}).first->second.second.push_back(duration);
  }
  std::vector<DurationStatistics> rows;
  rows.reserve(durations.size());
  int64_t total = 0;
  for (auto& [text, named] : durations) {
    rows.push_back(statistics_of(named.first, named.second));
    total += rows.back().total_ns;
  }
  for (DurationStatistics& row : rows) row.percent = total > 0 ? 100.0 * row.total_ns / total : 0;
  std::sort(rows.begin(), rows.end(), [&](const DurationStatistics& a, const DurationStatistics& b) {
    return std::forward_as_tuple(b.total_ns, model.str(a.name)) < std::forward_as_tuple(a.total_ns, model.str(b.name));
  });
  return rows;
}

}  // namespace

std::vector<DurationStatistics> kernel_statistics(const TraceModel& model) {
  std::vector<std::pair<StringId, int64_t>> kernels;
  for (const GpuActivity& a : model.gpu.activities) {
    if (a.kind == GpuActivityKind::Kernel) kernels.emplace_back(a.name, a.end_ns - a.start_ns);
  }
  return by_name(model, kernels);
}

std::vector<DurationStatistics> api_statistics(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::vector<std::pair<StringId, int64_t>> calls;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::CudaRuntime || r.kind[i] == RangeKind::CudaDriver) {
      calls.emplace_back(r.name[i], r.end_ns[i] - r.begin_ns[i]);
    }
  }
  return by_name(model, calls);
}

}  // namespace perfprof
