#include "record/recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include <fmt/format.h>

namespace perfprof {
namespace {

// A range id: the thread's tag above bit 40, bit 39 free for callers, a per-thread sequence below.
constexpr int kRangeTagShift = 40;
constexpr uint64_t kRangeSeqMask = Recorder::kRangeIdFreeBit - 1;

// Keeps the thread's buffer alive in the registry and marks it exited when the thread ends, so
// the collector keeps its events and frees it once drained.
struct ThreadSlot {
  std::shared_ptr<ThreadBuffer> buffer;
  ~ThreadSlot();
};

// initial-exec: a plain %fs-relative load on the hot path instead of a __tls_get_addr call.
thread_local ThreadBuffer* tls_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local uint64_t tls_range_tag __attribute__((tls_model("initial-exec"))) = 0;
thread_local uint64_t tls_range_seq __attribute__((tls_model("initial-exec"))) = 0;
// Events to drop before this thread tries again to get a buffer, after a try ran out of memory.
thread_local uint32_t tls_registration_countdown __attribute__((tls_model("initial-exec"))) = 0;
thread_local ThreadSlot tls_slot;

ThreadSlot::~ThreadSlot() {
  if (buffer) buffer->mark_thread_exited();
  tls_buffer = nullptr;
}

std::atomic<uint64_t> g_next_range_tag{1};

std::string current_os_thread_name(int64_t os_tid) {
  char name[64] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) == 0 && name[0] != '\0') {
    return name;
  }
  return fmt::format("thread {}", os_tid);
}

// Moves the events `buffer` holds into `collected`; false, with nothing moved, when memory for
// the copy cannot be had.
bool move_events(ThreadBuffer& buffer, CollectedEvents& collected) noexcept {
  try {
    ThreadEvents thread{buffer.index(), buffer.os_tid(), buffer.name(), {}};
    collected.threads.reserve(collected.threads.size() + 1);  // the push below cannot fail after the consume
    buffer.consume(&thread.events);  // consumes nothing when the copy cannot be had
    if (!thread.events.empty()) collected.threads.push_back(std::move(thread));
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

}  // namespace

int64_t current_os_tid() { return static_cast<int64_t>(syscall(SYS_gettid)); }

Recorder& Recorder::instance() {
  static Recorder* recorder = new Recorder();  // never destroyed: threads may record at exit
  return *recorder;
}

uint64_t Recorder::next_range_id() noexcept {
  if (tls_range_tag == 0) tls_range_tag = g_next_range_tag.fetch_add(1, std::memory_order_relaxed);
  return (tls_range_tag << kRangeTagShift) | (++tls_range_seq & kRangeSeqMask);
}

void Recorder::counter(StringId name, double value) noexcept {
  counter_sample(now_ns(), CounterMetric::User, name, value);
}

void Recorder::counter_sample(int64_t ts_ns, CounterMetric metric, StringId instance, double value) noexcept {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  RawEvent event{ts_ns, bits, instance, kNoArgs, EventKind::Counter, RangeKind::Other, {}};
  set_counter_metric(event, metric);
  append(event);
}

void Recorder::append(const RawEvent& event) noexcept {
  if (ThreadBuffer* buffer = current_thread_buffer()) {
    buffer->append(event);
  } else {
    unbuffered_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

ThreadBuffer* Recorder::current_thread_buffer() noexcept {
  ThreadBuffer* buffer = tls_buffer;
  return buffer ? buffer : register_current_thread();
}

ThreadBuffer* Recorder::register_current_thread() noexcept {
  if (tls_registration_countdown > 0) {
    --tls_registration_countdown;
    return nullptr;
  }
  try {
    const int64_t os_tid = current_os_tid();
    std::lock_guard<std::mutex> lock(registry_mutex_);
    auto buffer = std::make_shared<ThreadBuffer>(next_buffer_index_++, os_tid,
                                                 current_os_thread_name(os_tid), budget_);
    buffers_.push_back(buffer);
    tls_slot.buffer = buffer;
    tls_buffer = buffer.get();
    return tls_buffer;
  } catch (...) {
    // Out of memory: the event is lost (and counted) and the job goes on; the next tries wait.
    tls_registration_countdown = ThreadBuffer::kEventsBetweenAllocationTries;
    return nullptr;
  }
}

void Recorder::name_current_thread(std::string name) noexcept {
  if (ThreadBuffer* buffer = current_thread_buffer()) buffer->set_name(std::move(name));
}

void Recorder::name_thread(int64_t os_tid, const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (auto& buffer : buffers_) {
    if (buffer->os_tid() == os_tid && !buffer->thread_exited()) buffer->set_name(name);
  }
}

template <typename Visit>
void Recorder::for_each_buffer(Visit&& visit) {
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (auto& buffer : buffers_) visit(*buffer);
  // A buffer whose thread has ended and whose events are all collected is no longer needed.
  auto finished = [](const std::shared_ptr<ThreadBuffer>& buffer) {
    return buffer->thread_exited() && !buffer->has_unconsumed();
  };
  buffers_.erase(std::remove_if(buffers_.begin(), buffers_.end(), finished), buffers_.end());
}

void Recorder::add_completed(std::vector<CompletedRange> ranges) {
  std::lock_guard<std::mutex> lock(imported_mutex_);
  if (completed_.empty()) {
    completed_ = std::move(ranges);
  } else {
    completed_.insert(completed_.end(), ranges.begin(), ranges.end());
  }
}

void Recorder::add_memory(memory::MemoryEvents events) {
  std::lock_guard<std::mutex> lock(imported_mutex_);
  memory::append_events(memory_, std::move(events));
}

void Recorder::add_observed_tensors(std::vector<memory::ObservedTensor> tensors) {
  std::lock_guard<std::mutex> lock(imported_mutex_);
  observed_tensors_.insert(observed_tensors_.end(), tensors.begin(), tensors.end());
}

void Recorder::add_import_losses(ImportLosses losses) {
  std::lock_guard<std::mutex> lock(imported_mutex_);
  import_losses_.events += losses.events;
  import_losses_.failed_reads += losses.failed_reads;
}

void Recorder::discard() {
  for_each_buffer([](ThreadBuffer& buffer) {
    buffer.consume(nullptr);
    buffer.take_dropped();
  });
  unbuffered_dropped_.store(0, std::memory_order_relaxed);
  budget_.refill();
  std::lock_guard<std::mutex> lock(imported_mutex_);
  completed_.clear();
  memory_ = {};
  observed_tensors_.clear();
  import_losses_ = {};
}

uint64_t Recorder::buffered_events() {
  uint64_t events = 0;
  for_each_buffer([&](const ThreadBuffer& buffer) { events += buffer.unconsumed(); });
  return events;
}

CollectedEvents Recorder::collect() {
  CollectedEvents collected;
  collected.dropped_events = unbuffered_dropped_.exchange(0, std::memory_order_relaxed);
  // Out of memory for a thread's copy, the events of that thread and the ones after are dropped
  // and counted: collecting must not fail, and holding them would only make memory scarcer.
  bool out_of_memory = false;
  for_each_buffer([&](ThreadBuffer& buffer) {
    collected.dropped_events += buffer.take_dropped();
    if (!out_of_memory && move_events(buffer, collected)) return;
    out_of_memory = true;
    // Counted as they are dropped: the thread may append between a count and a drop.
    collected.dropped_events += buffer.consume(nullptr);
  });
  std::lock_guard<std::mutex> lock(imported_mutex_);
  collected.completed.swap(completed_);
  collected.memory = std::exchange(memory_, {});
  collected.observed_tensors.swap(observed_tensors_);
  collected.import_losses = std::exchange(import_losses_, {});
  return collected;
}

}  // namespace perfprof
