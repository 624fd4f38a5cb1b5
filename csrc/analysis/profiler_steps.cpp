#include "analysis/profiler_steps.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>

namespace perfprof {

std::vector<ProfilerStep> profiler_step_ranges(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::vector<std::pair<int64_t, size_t>> rows;  // (begin, row)
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::Step) rows.emplace_back(r.begin_ns[i], i);
  }
  std::sort(rows.begin(), rows.end());
  std::vector<ProfilerStep> steps;
  for (const auto& [begin, i] : rows) {
    steps.push_back({model.str(r.name[i]).substr(kProfilerStepPrefix.size()), (r.flags[i] & kRangeUnfinished) == 0,
                     (r.flags[i] & kRangeStepTail) != 0, r.begin_ns[i], r.end_ns[i]});
  }
  return steps;
}

std::vector<ProfilerStep> profiler_steps(const TraceModel& model) {
  std::vector<ProfilerStep> steps = profiler_step_ranges(model);
  steps.erase(std::remove_if(steps.begin(), steps.end(), [](const ProfilerStep& step) { return !step.is_step(); }),
              steps.end());
  return steps;
}

}  // namespace perfprof
