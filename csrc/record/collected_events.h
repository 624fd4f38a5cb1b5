#pragma once
// What the recorder hands over at the end of a session: each thread's raw events, the ranges
// added complete (imported from torch, GC pauses), memory profiling's events, and what was lost.
#include <cstdint>
#include <string>
#include <vector>

#include "common/args.h"
#include "common/string_table.h"
#include "memory/memory_events.h"
#include "record/event.h"

namespace perfprof {

struct ThreadEvents {
  uint32_t index = 0;
  int64_t os_tid = 0;
  std::string name;
  std::vector<RawEvent> events;
};

// The track of Python garbage-collection pauses. No OS thread has this id: Linux's pid_max is
// at most 2^22.
constexpr int64_t kGcTrackTid = int64_t{1} << 30;

// A range known only once it has ended, on an OS thread or a synthetic track (kGcTrackTid): a
// garbage-collection pause, or an operator another profiler recorded.
struct CompletedRange {
  int64_t os_tid = 0;
  int64_t begin_ns = 0;  // now_ns() clock
  int64_t end_ns = 0;
  StringId name = kEmptyString;
  ArgSetId args = kNoArgs;
  int64_t sequence = -1;  // autograd sequence number, -1 for none
  // Backward operators: the OS thread that ran their forward pass (-1 when it recorded nothing);
  // 0 for every other range.
  int64_t forward_os_tid = 0;
  RangeKind kind = RangeKind::Other;
  bool imported = false;  // recorded by torch's profiler: times converted from its clock
};

// What could not be read when importing another profiler's results: events left out, and reads
// that failed (an event skipped for its name or times, or one field left out of an event).
struct ImportLosses {
  uint64_t events = 0;
  uint64_t failed_reads = 0;
};

struct CollectedEvents {
  std::vector<ThreadEvents> threads;
  uint64_t dropped_events = 0;
  std::vector<CompletedRange> completed;
  memory::MemoryEvents memory;
  std::vector<memory::ObservedTensor> observed_tensors;
  ImportLosses import_losses;
};

// The raw events of every thread.
uint64_t event_count(const CollectedEvents& collected);

// Adds `more` to `into`: each thread's events after those `into` has of it (by buffer index),
// the rest appended, the losses summed.
void append_collected(CollectedEvents& into, CollectedEvents more);

}  // namespace perfprof
