#include "record/thread_buffer.h"

#include <algorithm>
#include <new>

namespace perfprof {

ThreadBuffer::ThreadBuffer(uint32_t index, int64_t os_tid, std::string name, EventBudget& budget)
    : index_(index), os_tid_(os_tid), budget_(budget), name_(std::move(name)) {}

bool ThreadBuffer::start_new_chunk() noexcept {
  if (allocation_retry_countdown_ > 0) {
    --allocation_retry_countdown_;
    return false;
  }
  size_t capacity = next_chunk_events_;
  if (!budget_.take(capacity)) {
    capacity = kFirstChunkEvents;  // the last of the budget, in small chunks
    if (!budget_.take(capacity)) return false;
  }
  Chunk chunk{std::unique_ptr<RawEvent[]>(new (std::nothrow) RawEvent[capacity]), capacity};
  if (!chunk.events) {
    allocation_retry_countdown_ = kEventsBetweenAllocationTries;
    return false;
  }
  cursor_ = chunk.events.get();
  chunk_end_ = cursor_ + capacity;
  next_chunk_events_ = std::min(capacity * 2, kMaxChunkEvents);
  try {
    std::lock_guard<std::mutex> lock(chunks_mutex_);
    chunks_.push_back(std::move(chunk));
  } catch (...) {  // the chunk list cannot grow: the chunk goes, its events are dropped
    cursor_ = chunk_end_ = nullptr;
    allocation_retry_countdown_ = kEventsBetweenAllocationTries;
    return false;
  }
  return true;
}

uint64_t ThreadBuffer::consume(std::vector<RawEvent>* out) {
  const uint64_t committed = committed_.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(chunks_mutex_);
  const uint64_t taken = committed - consumed_;
  if (out) out->reserve(out->size() + (committed - consumed_));
  while (consumed_ < committed) {
    // Committed events past a full front chunk are in the chunks after it.
    if (read_slot_ == chunks_.front().capacity) {
      chunks_.pop_front();
      read_slot_ = 0;
    }
    const Chunk& chunk = chunks_.front();
    const size_t count = std::min<uint64_t>(committed - consumed_, chunk.capacity - read_slot_);
    if (out) {
      const RawEvent* first = chunk.events.get() + read_slot_;
      out->insert(out->end(), first, first + count);
    }
    read_slot_ += count;
    consumed_ += count;
  }
  // Free the front chunk once read, unless it is the last: the writer may still be filling it.
  if (chunks_.size() > 1 && read_slot_ == chunks_.front().capacity) {
    chunks_.pop_front();
    read_slot_ = 0;
  }
  return taken;
}

uint64_t ThreadBuffer::unconsumed() const {
  const uint64_t committed = committed_.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(chunks_mutex_);
  return committed - consumed_;
}

std::string ThreadBuffer::name() const {
  std::lock_guard<std::mutex> lock(chunks_mutex_);
  return name_;
}

void ThreadBuffer::set_name(std::string name) {
  std::lock_guard<std::mutex> lock(chunks_mutex_);
  name_ = std::move(name);
}

}  // namespace perfprof
