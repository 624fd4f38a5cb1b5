#pragma once
// The memory timeline's data files, in torch.profiler's formats so scripts written for its
// export_memory_timeline read ours.
#include <cstdint>
#include <string>

#include "memory/categorizer.h"
#include "memory/timeline.h"

namespace perfprof {

// `[times_us, sizes]`: sizes[i] is `[0, bytes of each category]` from times_us[i] on.
void write_memory_timeline_json(const memory::MemoryTimeline& timeline, const std::string& path);

// `[[time_ns, action, bytes, category], ...]` for `device`: every change as it happened (Unix
// nanoseconds, -1 for memory live before the first event; bytes negative when memory goes).
void write_memory_timeline_raw(const memory::MemoryProfile& profile, memory::Device device, int64_t unix_offset_ns,
                               const std::string& path);

}  // namespace perfprof
