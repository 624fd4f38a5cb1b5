#pragma once
// Hand-made memory events for the memory tests.
#include <cstdint>

#include "common/string_table.h"
#include "memory/memory_events.h"

namespace perfprof::test {

inline memory::Allocation allocator_event(int64_t time_ns, uint64_t ptr, int64_t bytes, memory::Device device,
                                          int32_t storage = -1, int64_t total_allocated = 0,
                                          int64_t total_reserved = 0, StringId op = kEmptyString) {
  memory::Allocation a;
  a.time_ns = time_ns;
  a.ptr = ptr;
  a.bytes = bytes;
  a.total_allocated = total_allocated;
  a.total_reserved = total_reserved;
  a.device = device;
  a.storage = storage;
  a.op = op;
  return a;
}

// Appends `allocation` to `events`; returns its index.
inline uint32_t add_allocation(memory::MemoryEvents& events, const memory::Allocation& allocation) {
  events.allocations.push_back(allocation);
  return static_cast<uint32_t>(events.allocations.size() - 1);
}

}  // namespace perfprof::test
