#include "analysis/time_intervals.h"

#include <algorithm>

namespace perfprof {
namespace {

// The first interval of `set` ending after `begin_ns`.
TimeSet::const_iterator first_ending_after(const TimeSet& set, int64_t begin_ns) {
  return std::upper_bound(set.begin(), set.end(), begin_ns,
                          [](int64_t time, const TimeInterval& interval) { return time < interval.end_ns; });
}

}  // namespace

TimeSet union_of(std::vector<TimeInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const TimeInterval& a, const TimeInterval& b) { return a.begin_ns < b.begin_ns; });
  TimeSet set;
  for (const TimeInterval& interval : intervals) {
    if (interval.end_ns <= interval.begin_ns) continue;
    if (!set.empty() && interval.begin_ns <= set.back().end_ns) {
      set.back().end_ns = std::max(set.back().end_ns, interval.end_ns);
    } else {
      set.push_back(interval);
    }
  }
  return set;
}

TimeSet intersection_of(const TimeSet& a, const TimeSet& b) {
  TimeSet both;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t begin = std::max(a[i].begin_ns, b[j].begin_ns);
    const int64_t end = std::min(a[i].end_ns, b[j].end_ns);
    if (begin < end) both.push_back({begin, end});
    // The interval ending first can meet nothing further in the other set.
    if (a[i].end_ns < b[j].end_ns) {
      ++i;
    } else {
      ++j;
    }
  }
  return both;
}

int64_t covered_ns(const TimeSet& set, int64_t begin_ns, int64_t end_ns) {
  int64_t covered = 0;
  for (auto it = first_ending_after(set, begin_ns); it != set.end() && it->begin_ns < end_ns; ++it) {
    covered += std::min(it->end_ns, end_ns) - std::max(it->begin_ns, begin_ns);
  }
  return covered;
}

std::optional<int64_t> first_in(const TimeSet& set, int64_t begin_ns, int64_t end_ns) {
  const auto it = first_ending_after(set, begin_ns);
  if (it == set.end() || it->begin_ns >= end_ns) return std::nullopt;
  return std::max(it->begin_ns, begin_ns);
}

}  // namespace perfprof
