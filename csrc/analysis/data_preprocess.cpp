#include "analysis/data_preprocess.h"

#include <algorithm>

#include "analysis/profiler_steps.h"

namespace perfprof {
namespace {

bool is_fetch(const TraceModel& model, size_t row) {
  return model.ranges.kind[row] == RangeKind::UserAnnotation &&
         std::string_view(model.str(model.ranges.name[row])).substr(0, kDataLoaderPrefix.size()) == kDataLoaderPrefix;
}

}  // namespace

bool has_data_loader_fetches(const TraceModel& model) {
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    if (is_fetch(model, i)) return true;
  }
  return false;
}

std::vector<DataPreprocess> data_preprocess(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::vector<size_t> fetches;
  for (size_t i = 0; i < r.size(); ++i) {
    if (is_fetch(model, i)) fetches.push_back(i);
  }
  std::vector<DataPreprocess> rows;
  // Steps and fetches are few (one fetch a step): a pass over the fetches per step.
  for (const ProfilerStep& step : profiler_steps(model)) {
    DataPreprocess row;
    row.step = step.number;
    for (size_t f : fetches) {
      if (r.begin_ns[f] >= step.begin_ns && r.begin_ns[f] < step.end_ns) row.count += 1;
      row.total_ns += std::max<int64_t>(0, std::min(r.end_ns[f], step.end_ns) - std::max(r.begin_ns[f], step.begin_ns));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace perfprof
