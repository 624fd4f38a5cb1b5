#pragma once
// The fixed-size record every host event is stored as in a thread buffer.
#include <cstdint>

#include "common/args.h"
#include "common/string_table.h"
#include "record/counter_metric.h"
#include "record/range_kind.h"

namespace perfprof {

// RangeSequence follows a RangeBegin of the same thread: its payload is the operator's autograd
// sequence number, which links a forward operator to its backward.
enum class EventKind : uint8_t { RangeBegin, RangeEnd, Instant, Counter, RangeSequence };

struct RawEvent {
  int64_t ts_ns;     // now_ns() at the event
  uint64_t payload;  // range id for RangeBegin/RangeEnd; double bits for Counter
  StringId name;
  ArgSetId args;         // the event's typed arguments (global_arg_sets()), or kNoArgs
  EventKind kind;
  RangeKind range_kind;  // what a begun range or an instant is; Other for the other events
  uint8_t reserved[6];   // a step's number (below) or a counter's metric (below); else zero
};
static_assert(sizeof(RawEvent) == 32, "RawEvent is sized for cache-friendly buffers");

// A schedule step's begin event carries its step number in `reserved` (48 bits, little-endian),
// its name being the step prefix alone: recording a step then interns no string of its own,
// which would grow the process's string table for as long as it profiles. The trace builder
// names the range ProfilerStep#<number>.
inline constexpr uint64_t kMaxCarriedStep = (uint64_t{1} << 48) - 1;

inline void set_step_number(RawEvent& event, uint64_t step) {
  for (size_t i = 0; i < sizeof(event.reserved); ++i) event.reserved[i] = static_cast<uint8_t>(step >> (8 * i));
}

inline uint64_t step_number(const RawEvent& event) {
  uint64_t step = 0;
  for (size_t i = 0; i < sizeof(event.reserved); ++i) step |= uint64_t{event.reserved[i]} << (8 * i);
  return step;
}

// A schedule step's end event says in the first reserved byte how the step ended: 0 at a step
// boundary (profile.step()), 1 because the profiler stopped inside it. The latter is the stretch
// after the last step (its tail), which torch also names ProfilerStep#N but which is no step.
inline void set_step_ended_by_stop(RawEvent& event, bool by_stop) { event.reserved[0] = by_stop ? 1 : 0; }

inline bool step_ended_by_stop(const RawEvent& event) {
  return event.kind == EventKind::RangeEnd && event.range_kind == RangeKind::Step && event.reserved[0] == 1;
}

// A counter event carries its metric in the first reserved byte (0, User, for a user's counter):
// the samplers' counters are named by their instance ("cpu3", "GPU 0").
inline void set_counter_metric(RawEvent& event, CounterMetric metric) { event.reserved[0] = static_cast<uint8_t>(metric); }

// The counter's metric; a metric this perfprof does not know (a newer capture's) reads as User.
inline CounterMetric counter_metric(const RawEvent& event) {
  return is_counter_metric(event.reserved[0]) ? static_cast<CounterMetric>(event.reserved[0]) : CounterMetric::User;
}

}  // namespace perfprof
