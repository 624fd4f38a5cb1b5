#pragma once
// Sets of time as sorted, disjoint [begin, end) intervals: the union of activities that
// overlap (kernels on several streams), their intersection, and how much of a window they cover.
#include <cstdint>
#include <optional>
#include <vector>

namespace perfprof {

struct TimeInterval {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// Sorted, disjoint, non-empty intervals.
using TimeSet = std::vector<TimeInterval>;

// The union of `intervals` (any order, may overlap; empty ones are dropped).
TimeSet union_of(std::vector<TimeInterval> intervals);
// The time in both sets.
TimeSet intersection_of(const TimeSet& a, const TimeSet& b);
// Nanoseconds of `set` inside [begin, end).
int64_t covered_ns(const TimeSet& set, int64_t begin_ns, int64_t end_ns);
// The first moment of `set` inside [begin, end), if any.
std::optional<int64_t> first_in(const TimeSet& set, int64_t begin_ns, int64_t end_ns);

}  // namespace perfprof
