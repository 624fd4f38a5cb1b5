#include "memory/timeline.h"

#include <algorithm>

namespace perfprof::memory {

std::vector<Device> devices_with_memory(const MemoryEvents& events) {
  std::vector<Device> devices;
  for (const Allocation& allocation : events.allocations) {
    if (std::find(devices.begin(), devices.end(), allocation.device) == devices.end()) {
      devices.push_back(allocation.device);
    }
  }
  std::sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) {
    return a.type != b.type ? a.type < b.type : a.index < b.index;
  });
  return devices;
}

MemoryTimeline build_timeline(const MemoryProfile& profile, const MemoryEvents& events, Device device,
                              int64_t unix_offset_ns) {
  MemoryTimeline timeline;
  timeline.device = device.name();
  CategoryBytes live{};
  for (const CategoryChange& change : profile.changes) {
    if (change.device != device) continue;
    live[index_of(change.category)] += change.bytes;
    if (change.time_ns == kPreexistingTime) continue;  // sorted first: part of the first point
    const int64_t time_us = (change.time_ns + unix_offset_ns) / 1000;
    if (timeline.times_us.empty() || time_us != timeline.times_us.back()) {
      timeline.times_us.push_back(time_us);
      timeline.bytes.push_back(live);
    } else {
      timeline.bytes.back() = live;
    }
  }
  for (const Allocation& allocation : events.allocations) {
    if (allocation.device != device) continue;
    timeline.max_allocated = std::max(timeline.max_allocated, allocation.total_allocated);
    timeline.max_reserved = std::max(timeline.max_reserved, allocation.total_reserved);
  }
  return timeline;
}

}  // namespace perfprof::memory
