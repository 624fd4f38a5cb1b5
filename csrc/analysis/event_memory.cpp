#include "analysis/event_memory.h"

#include <algorithm>
#include <climits>
#include <utility>

namespace perfprof {
namespace {

// Bytes of the allocator events within [begin, end], from prefix sums over time.
class AllocationSums {
 public:
  explicit AllocationSums(const std::vector<memory::Allocation>& allocations) : sums_(1) {
    times_.reserve(allocations.size());
    sums_.reserve(allocations.size() + 1);
    for (const memory::Allocation& a : allocations) {
      times_.push_back(a.time_ns);
      const MemoryBytes bytes = bytes_of(a);
      sums_.push_back({sums_.back().cpu + bytes.cpu, sums_.back().device + bytes.device});
    }
  }

  MemoryBytes within(int64_t begin_ns, int64_t end_ns) const {
    const auto first = static_cast<size_t>(std::lower_bound(times_.begin(), times_.end(), begin_ns) - times_.begin());
    const auto last = static_cast<size_t>(std::upper_bound(times_.begin(), times_.end(), end_ns) - times_.begin());
    if (last <= first) return {};
    return {sums_[last].cpu - sums_[first].cpu, sums_[last].device - sums_[first].device};
  }

 private:
  std::vector<int64_t> times_;  // allocator events are in time order
  std::vector<MemoryBytes> sums_;
};

std::vector<size_t> allocations_outside_events(const TraceModel& model, const FunctionEvents& events) {
  const RangeTable& r = model.ranges;
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (size_t i = 0; i < r.size(); ++i) {
    if (events.kind[i] != FunctionEventKind::kNone) spans.emplace_back(r.begin_ns[i], r.end_ns[i]);
  }
  std::sort(spans.begin(), spans.end());
  std::vector<size_t> outside;
  const std::vector<memory::Allocation>& allocations = model.memory.events.allocations;
  size_t next = 0;
  int64_t covered_until = INT64_MIN;  // the latest end of the spans begun so far
  for (size_t a = 0; a < allocations.size(); ++a) {
    const int64_t t = allocations[a].time_ns;
    for (; next < spans.size() && spans[next].first <= t; ++next) covered_until = std::max(covered_until, spans[next].second);
    if (covered_until < t) outside.push_back(a);
  }
  return outside;
}

}  // namespace

MemoryBytes bytes_of(const memory::Allocation& allocation) {
  if (allocation.device.type == memory::DeviceType::kCpu) return {allocation.bytes, 0};
  return {0, allocation.bytes};
}

EventMemory event_memory(const TraceModel& model, const FunctionEvents& events) {
  const RangeTable& r = model.ranges;
  EventMemory memory;
  memory.total.resize(r.size());
  memory.self.resize(r.size());
  const std::vector<memory::Allocation>& allocations = model.memory.events.allocations;
  if (allocations.empty()) return memory;
  const AllocationSums sums(allocations);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_listed(events.kind[i])) continue;
    memory.total[i] = sums.within(r.begin_ns[i], r.end_ns[i]);
    if (events.kind[i] == FunctionEventKind::kNested) memory.self[i] = memory.total[i];
  }
  for (size_t i = 0; i < r.size(); ++i) {
    if (events.kind[i] != FunctionEventKind::kNested || events.parent[i] < 0) continue;
    MemoryBytes& parent = memory.self[static_cast<size_t>(events.parent[i])];
    parent.cpu -= memory.total[i].cpu;
    parent.device -= memory.total[i].device;
  }
  memory.outside = allocations_outside_events(model, events);
  return memory;
}

}  // namespace perfprof
