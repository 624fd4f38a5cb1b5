#include "capture/stored_events.h"

#include <algorithm>

namespace perfprof {

void count_event_kinds(const RawEvent* events, size_t count, EventKindCounts& counts) {
  for (size_t i = 0; i < count; ++i) {
    const auto kind = static_cast<size_t>(events[i].kind);
    if (kind < counts.size()) ++counts[kind];
  }
}

uint64_t StoredEvents::for_each_block(uint32_t index,
                                      const std::function<void(const RawEvent*, size_t)>& visit) const {
  const auto found = runs.find(index);
  if (found == runs.end()) return 0;
  std::vector<RawEvent> block;
  uint64_t unreadable = 0;
  for (const StoredRun& run : found->second) {
    block.resize(std::min<uint64_t>(run.count, kBlockEvents));
    for (uint64_t first = 0; first < run.count; first += block.size()) {
      const size_t wanted = std::min<uint64_t>(block.size(), run.count - first);
      const size_t count = bytes->read(run.offset + first * sizeof(RawEvent), wanted, block.data());
      if (count > 0) visit(block.data(), count);
      if (count < wanted) {
        unreadable += run.count - first - count;
        break;
      }
    }
  }
  return unreadable;
}

}  // namespace perfprof
