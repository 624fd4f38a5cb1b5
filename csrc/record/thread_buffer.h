#pragma once
// An append-only event buffer owned by one writer thread and drained by the collector.
//
// The writer stores into the current chunk and publishes with one release store of the
// committed count: no lock and no allocation per event. It takes the chunk-list mutex only when
// a chunk is full. The collector copies committed events out and frees chunks the writer left.
// Chunks start small and double up to kMaxChunkEvents, so a thread that records a few events
// (thousands of short-lived threads) takes a few KiB, not a full chunk; each chunk's room is
// taken from the session's EventBudget.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "record/event.h"
#include "record/event_budget.h"

namespace perfprof {

class ThreadBuffer {
 public:
  static constexpr size_t kFirstChunkEvents = 128;  // 4 KiB
  static constexpr size_t kMaxChunkEvents = 8192;   // 256 KiB
  // After an allocation fails, this many events are dropped before the next try: under memory
  // pressure a failed allocation per event would slow the job down.
  static constexpr uint32_t kEventsBetweenAllocationTries = 4096;

  // `budget` outlives the buffer (the recorder's).
  ThreadBuffer(uint32_t index, int64_t os_tid, std::string name, EventBudget& budget);
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  // Writer thread only. Never throws: an event that cannot be stored is counted as dropped.
  void append(const RawEvent& event) noexcept {
    if (cursor_ == chunk_end_ && !start_new_chunk()) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    *cursor_++ = event;
    committed_.store(committed_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Collector: appends events committed since the last call to `out` (or drops them when `out`
  // is null) and frees chunks the writer has finished with; returns how many. Safe while the
  // writer appends.
  uint64_t consume(std::vector<RawEvent>* out);
  bool has_unconsumed() const { return unconsumed() != 0; }
  // Events committed and not consumed yet. Safe while the writer appends.
  uint64_t unconsumed() const;

  uint32_t index() const { return index_; }
  int64_t os_tid() const { return os_tid_; }
  std::string name() const;
  void set_name(std::string name);
  uint64_t take_dropped() { return dropped_.exchange(0, std::memory_order_relaxed); }
  void mark_thread_exited() { exited_.store(true, std::memory_order_release); }
  bool thread_exited() const { return exited_.load(std::memory_order_acquire); }

 private:
  struct Chunk {
    std::unique_ptr<RawEvent[]> events;
    size_t capacity;
  };
  bool start_new_chunk() noexcept;

  const uint32_t index_;
  const int64_t os_tid_;
  EventBudget& budget_;

  // Writer-only state.
  RawEvent* cursor_ = nullptr;
  RawEvent* chunk_end_ = nullptr;
  size_t next_chunk_events_ = kFirstChunkEvents;
  uint32_t allocation_retry_countdown_ = 0;

  std::atomic<uint64_t> committed_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> exited_{false};

  mutable std::mutex chunks_mutex_;  // guards chunks_, read_slot_, consumed_ and name_
  std::deque<Chunk> chunks_;
  size_t read_slot_ = 0;   // events of chunks_.front() handed to the collector
  uint64_t consumed_ = 0;  // events handed to the collector so far
  std::string name_;
};

}  // namespace perfprof
