#include "record/thread_buffer.h"

#include <algorithm>
#include <new>

namespace perfprof {

ThreadBuffer::ThreadBuffer(uint32_t index, int64_t os_tid, std::string name)
    : index_(index), os_tid_(os_tid), name_(std::move(name)) {}

bool ThreadBuffer::start_new_chunk() noexcept {
  std::unique_ptr<Chunk> chunk(new (std::nothrow) Chunk);
  if (!chunk) return false;
  cursor_ = chunk->events;
  chunk_end_ = chunk->events + kChunkEvents;
  std::lock_guard<std::mutex> lock(chunks_mutex_);
  chunks_.push_back(std::move(chunk));
  return true;
}

void ThreadBuffer::consume(std::vector<RawEvent>* out) {
  const uint64_t committed = committed_.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(chunks_mutex_);
  if (out) out->reserve(out->size() + (committed - consumed_));
  while (consumed_ < committed) {
    const uint64_t chunk_seq = consumed_ / kChunkEvents;
    const size_t slot = consumed_ % kChunkEvents;
    const size_t count = std::min<uint64_t>(committed - consumed_, kChunkEvents - slot);
    if (out) {
      const RawEvent* first = chunks_[chunk_seq - first_chunk_seq_]->events + slot;
      out->insert(out->end(), first, first + count);
    }
    consumed_ += count;
  }
  // Free finished chunks; the last one may still be the writer's current chunk.
  while (chunks_.size() > 1 && (first_chunk_seq_ + 1) * kChunkEvents <= consumed_) {
    chunks_.pop_front();
    ++first_chunk_seq_;
  }
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
