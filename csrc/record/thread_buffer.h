#pragma once
// An append-only event buffer owned by one writer thread and drained by the collector.
//
// The writer stores into the current chunk and publishes with one release store of the
// committed count: no lock and no allocation per event. It takes the chunk-list mutex only when
// a chunk is full. The collector copies committed events out and frees chunks the writer left.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "record/event.h"

namespace perfprof {

class ThreadBuffer {
 public:
  static constexpr size_t kChunkEvents = 8192;  // 256 KiB per chunk

  ThreadBuffer(uint32_t index, int64_t os_tid, std::string name);
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
  // is null) and frees chunks the writer has finished with. Safe while the writer appends.
  void consume(std::vector<RawEvent>* out);
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
    RawEvent events[kChunkEvents];
  };
  bool start_new_chunk() noexcept;

  const uint32_t index_;
  const int64_t os_tid_;

  // Writer-only state.
  RawEvent* cursor_ = nullptr;
  RawEvent* chunk_end_ = nullptr;

  std::atomic<uint64_t> committed_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> exited_{false};

  mutable std::mutex chunks_mutex_;  // guards chunks_, first_chunk_seq_, consumed_ and name_
  std::deque<std::unique_ptr<Chunk>> chunks_;
  uint64_t first_chunk_seq_ = 0;  // sequence number of chunks_.front()
  uint64_t consumed_ = 0;         // events handed to the collector so far
  std::string name_;
};

}  // namespace perfprof
