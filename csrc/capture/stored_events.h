#pragma once
// Host events a capture read from its bytes leaves where they are until the trace is built: the
// reader checks each HostEvents chunk and notes where its records lie, and building reads them
// back a block at a time. Reading and building a long capture therefore holds one block of raw
// events, never all of them beside the trace being built.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "record/event.h"

namespace perfprof {

// Events of each kind (indexed by EventKind), to size a trace's tables once.
using EventKindCounts = std::array<uint64_t, 5>;
static_assert(static_cast<size_t>(EventKind::RangeSequence) + 1 == EventKindCounts{}.size(),
              "one count per EventKind");

// Adds the kinds of `count` events to `counts` (a kind no version knows counts nowhere).
void count_event_kinds(const RawEvent* events, size_t count, EventKindCounts& counts);

// The bytes the stored events lie in: a capture file, or a copy of bytes read from memory.
class EventBytes {
 public:
  virtual ~EventBytes() = default;
  // Copies the `count` records at `offset` into `into`. Returns how many it copied: fewer when
  // the bytes are no longer there (the file was cut since it was read).
  virtual size_t read(uint64_t offset, size_t count, RawEvent* into) const = 0;
};

// The records of one HostEvents chunk.
struct StoredRun {
  uint64_t offset = 0;  // of the first record in the capture's bytes
  uint64_t count = 0;
};

struct StoredEvents {
  // The largest block of events handed to a visitor: 2 MiB.
  static constexpr size_t kBlockEvents = size_t{1} << 16;

  std::shared_ptr<const EventBytes> bytes;
  std::unordered_map<uint32_t, std::vector<StoredRun>> runs;  // by thread buffer index, in recording order
  uint64_t count = 0;                                         // of every run
  EventKindCounts kinds{};                                    // of every run

  bool empty() const { return count == 0; }
  // Calls `visit(events, count)` for the stored events of thread `index`, in recording order,
  // kBlockEvents at most at a time. Returns how many could not be read back (their bytes are
  // gone): those are left out, and the caller counts them as dropped.
  uint64_t for_each_block(uint32_t index, const std::function<void(const RawEvent*, size_t)>& visit) const;
};

}  // namespace perfprof
