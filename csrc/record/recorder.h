#pragma once
// The process-wide host event recorder.
//
// Recording an event is a relaxed load of the channel mask, a clock read and a store into the
// calling thread's buffer. What to record (channels) is decided by the Python layer; the recorder
// has no policy of its own.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "memory/memory_events.h"
#include "record/collected_events.h"
#include "record/event.h"
#include "record/event_budget.h"
#include "record/thread_buffer.h"

namespace perfprof {

// Independent switches for each kind of host event; a bit mask so one load tests any of them.
enum Channel : uint32_t {
  kChannelSteps = 1u << 0,            // ProfilerStep#N ranges
  kChannelUserAnnotations = 1u << 1,  // record_function
  kChannelMstx = 1u << 2,             // mstx marks and ranges
  kChannelCounters = 1u << 3,         // counter samples
  kChannelOperators = 1u << 4,        // PyTorch operators (csrc/torch_hooks)
  kChannelPython = 1u << 5,           // Python function calls (with_stack)
  kChannelGc = 1u << 6,               // garbage-collection pauses (gc_detect_threshold)
};

// The calling thread's id as the OS (and every trace viewer) knows it.
int64_t current_os_tid();

class Recorder {
 public:
  static Recorder& instance();

  uint32_t channels() const noexcept { return channels_.load(std::memory_order_relaxed); }
  bool enabled(uint32_t channel) const noexcept { return (channels() & channel) != 0; }
  void set_channels(uint32_t mask) noexcept { channels_.store(mask, std::memory_order_relaxed); }

  // Unique in the process and never 0, whether or not anything is being recorded, so a range
  // can be started on one thread and ended on another. Bit kRangeIdFreeBit is always clear:
  // callers may use it to tag the ids they hand out.
  static uint64_t next_range_id() noexcept;
  static constexpr uint64_t kRangeIdFreeBit = uint64_t{1} << 39;

  void begin_range(uint64_t id, StringId name, RangeKind kind, ArgSetId args) noexcept {
    append({now_ns(), id, name, args, EventKind::RangeBegin, kind, {}});
  }
  // Begins schedule step `step` (at most kMaxCarriedStep), named `step_prefix` (event.h).
  void begin_step(uint64_t id, StringId step_prefix, uint64_t step) noexcept {
    RawEvent event{now_ns(), id, step_prefix, kNoArgs, EventKind::RangeBegin, RangeKind::Step, {}};
    set_step_number(event, step);
    append(event);
  }
  void end_range(uint64_t id) noexcept {
    append({now_ns(), id, kEmptyString, kNoArgs, EventKind::RangeEnd, RangeKind::Other, {}});
  }
  // Ends a range begun while recording (id != 0: callers hand out 0 for ranges not recorded),
  // unless recording has stopped since.
  void end_recorded_range(uint64_t id) noexcept {
    if (id != 0 && channels() != 0) end_range(id);
  }
  // Ends schedule step `id` as end_recorded_range does, saying whether the profiler stopped
  // inside it (event.h) rather than at a step boundary.
  void end_recorded_step(uint64_t id, bool by_stop) noexcept {
    if (id == 0 || channels() == 0) return;
    RawEvent event{now_ns(), id, kEmptyString, kNoArgs, EventKind::RangeEnd, RangeKind::Step, {}};
    set_step_ended_by_stop(event, by_stop);
    append(event);
  }
  void instant(StringId name, RangeKind kind, ArgSetId args) noexcept {
    append({now_ns(), 0, name, args, EventKind::Instant, kind, {}});
  }
  void counter(StringId name, double value) noexcept;
  // A sampler's reading: `metric` of `instance` at `ts_ns` (when it was read, not recorded).
  void counter_sample(int64_t ts_ns, CounterMetric metric, StringId instance, double value) noexcept;
  // Attaches an autograd sequence number to the range this thread began last.
  void range_sequence(int64_t sequence_nr) noexcept {
    append({now_ns(), static_cast<uint64_t>(sequence_nr), kEmptyString, kNoArgs, EventKind::RangeSequence,
            RangeKind::Other, {}});
  }

  // Adds ranges that are already complete. Not on a hot path: a lock per call.
  void add_completed(std::vector<CompletedRange> ranges);
  // Adds what memory profiling read from torch, and tensors seen in known roles.
  void add_memory(memory::MemoryEvents events);
  void add_observed_tensors(std::vector<memory::ObservedTensor> tensors);
  void add_import_losses(ImportLosses losses);

  // Names the calling thread (registering its buffer if needed), or a live thread by OS id.
  void name_current_thread(std::string name) noexcept;
  void name_thread(int64_t os_tid, const std::string& name);

  // The most events the thread buffers may take from now on (refilled by discard()); beyond it
  // events are dropped and counted (CollectedEvents::dropped_events).
  void set_event_limit(uint64_t events) noexcept { budget_.reset(events); }
  uint64_t event_limit() const noexcept { return budget_.limit(); }
  // Whether an event was dropped because the limit was reached since it was last set or refilled.
  bool event_limit_reached() const noexcept { return budget_.reached(); }

  // Drops every event recorded so far (warm-up steps, or stragglers from a stopped session) and
  // gives their room back to the event limit.
  void discard();
  // Moves every event recorded so far out of the thread buffers, grouped by thread.
  CollectedEvents collect();
  // Events in the thread buffers, not collected yet (what recording holds in memory).
  uint64_t buffered_events();

 private:
  Recorder() = default;
  void append(const RawEvent& event) noexcept;
  ThreadBuffer* current_thread_buffer() noexcept;
  ThreadBuffer* register_current_thread() noexcept;
  template <typename Visit>
  void for_each_buffer(Visit&& visit);

  std::atomic<uint32_t> channels_{0};
  EventBudget budget_;
  // Events of threads that could not get a buffer (out of memory), counted as dropped.
  std::atomic<uint64_t> unbuffered_dropped_{0};
  std::mutex registry_mutex_;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
  std::mutex imported_mutex_;  // guards what was added rather than recorded
  std::vector<CompletedRange> completed_;
  memory::MemoryEvents memory_;
  std::vector<memory::ObservedTensor> observed_tensors_;
  ImportLosses import_losses_;
  uint32_t next_buffer_index_ = 0;
};

}  // namespace perfprof
