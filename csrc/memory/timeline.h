#pragma once
// Bytes per category over time, for one device: the data behind every memory timeline export.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "memory/categorizer.h"
#include "memory/category.h"
#include "memory/memory_events.h"

namespace perfprof::memory {

using CategoryBytes = std::array<int64_t, kNumCategories>;

struct MemoryTimeline {
  std::string device;             // "cpu", "cuda:0"
  std::vector<int64_t> times_us;  // Unix time in microseconds, increasing
  std::vector<CategoryBytes> bytes;  // bytes live per category from times_us[i] until the next time
  int64_t max_allocated = 0;      // most bytes the allocator had handed out at once (its own count)
  int64_t max_reserved = 0;       // most bytes it held from the system (caching allocators)
};

// The devices allocations were seen on, CPU first, then by index.
std::vector<Device> devices_with_memory(const MemoryEvents& events);

// Bytes per category on `device` over time: `profile`'s changes summed in order, one point per
// microsecond in which something changed (what was live before the first event is counted from
// the first point). O(changes).
MemoryTimeline build_timeline(const MemoryProfile& profile, const MemoryEvents& events, Device device,
                              int64_t unix_offset_ns);

}  // namespace perfprof::memory
