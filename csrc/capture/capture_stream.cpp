#include "capture/capture_stream.h"

#include <unistd.h>

#include <pthread.h>

#include <chrono>
#include <set>
#include <exception>
#include <utility>

#include "capture/capture_file.h"
#include "capture/live_capture.h"
#include "record/event.h"
#include "record/recorder.h"

namespace perfprof {
namespace {

// How often the flushing thread looks at what the recorder holds: at ~10M events/s from all
// threads, 5 ms is 1.6 MB of events.
constexpr std::chrono::milliseconds kFlushPoll{5};

// A flushing thread holds the recorder's locks while it drains it. A fork in the middle would
// leave them locked in the child forever (its first discard() would hang), so every live
// stream's flusher is parked across fork(): the forking thread takes each flusher's lock, which
// the flusher holds whenever it is not waiting.
class ForkGuard {
 public:
  static ForkGuard& instance() {
    static ForkGuard* const guard = new ForkGuard();  // lives as long as fork handlers may run
    return *guard;
  }
  void add(std::mutex* flusher_lock) {
    std::lock_guard<std::mutex> lock(mutex_);
    locks_.insert(flusher_lock);
  }
  void remove(std::mutex* flusher_lock) {
    std::lock_guard<std::mutex> lock(mutex_);
    locks_.erase(flusher_lock);
  }

 private:
  ForkGuard() { pthread_atfork(&ForkGuard::prepare, &ForkGuard::release, &ForkGuard::release); }
  static void prepare() {
    ForkGuard& guard = instance();
    guard.mutex_.lock();
    for (std::mutex* flusher_lock : guard.locks_) flusher_lock->lock();
  }
  static void release() {
    ForkGuard& guard = instance();
    for (std::mutex* flusher_lock : guard.locks_) flusher_lock->unlock();
    guard.mutex_.unlock();
  }

  std::mutex mutex_;
  std::set<std::mutex*> locks_;
};

}  // namespace

CaptureStream::CaptureStream(const std::string& path)
    : path_(path), sink_(path), writer_(sink_), owner_pid_(getpid()) {
  writer_.process(this_process());
}

CaptureStream::~CaptureStream() { stop_flushing(); }

bool CaptureStream::ok() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_.ok();
}

uint64_t CaptureStream::events_appended() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_appended_;
}

uint64_t CaptureStream::cap_flushes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cap_flushes_;
}

void CaptureStream::append_recorded() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (writer_.ok()) append_locked(Recorder::instance().collect(), GpuInput{});
}

void CaptureStream::append(const CollectedEvents& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_locked(host, GpuInput{});
}

void CaptureStream::add_metadata(const RunMetadata& entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ended_) writer_.metadata({entry});
}

void CaptureStream::append_locked(const CollectedEvents& host, const GpuInput& gpu) {
  const Vocabulary used = vocabulary_used_by(host, gpu);
  writer_.strings(used.strings);
  writer_.arg_sets(used.arg_sets);
  writer_.other_threads(name_other_threads(host, gpu, named_threads_));
  writer_.host(host);
  for (const ThreadEvents& thread : host.threads) events_appended_ += thread.events.size();
}

void CaptureStream::start_flushing(uint64_t cap_bytes) {
  stop_flushing();
  const uint64_t cap_events = cap_bytes / 2 / sizeof(RawEvent);
  flusher_ = std::make_unique<Flusher>();
  ForkGuard::instance().add(&flusher_->mutex);
  flusher_->thread = std::thread([this, cap_events] { flush_at_cap(cap_events); });
}

void CaptureStream::stop_flushing() {
  if (!flusher_) return;
  ForkGuard::instance().remove(&flusher_->mutex);
  if (getpid() != owner_pid_) {
    // A forked child's copy: its thread stayed in the parent, and the condition variable still
    // counts it as waiting, so destroying it would wait forever. Left as it is.
    flusher_.release();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(flusher_->mutex);
    flusher_->stop = true;
  }
  flusher_->wake.notify_all();
  flusher_->thread.join();
  flusher_.reset();
}

void CaptureStream::flush_at_cap(uint64_t cap_events) {
  Flusher& flusher = *flusher_;
  std::unique_lock<std::mutex> wait_lock(flusher.mutex);
  while (!flusher.wake.wait_for(wait_lock, kFlushPoll, [&] { return flusher.stop; })) {
    if (Recorder::instance().buffered_events() < cap_events) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!writer_.ok()) return;  // nothing more leaves memory
    append_locked(Recorder::instance().collect(), GpuInput{});
    ++cap_flushes_;
  }
}

void CaptureStream::finish(const GpuInput& gpu, const CollectionWindow& window) {
  stop_flushing();
  std::lock_guard<std::mutex> lock(mutex_);
  append_locked(CollectedEvents{}, gpu);
  writer_.gpu(gpu);
  writer_.window(window);
  writer_.end();
  ended_ = true;
}

Capture complete_capture(CaptureStream& stream, CollectedEvents rest, GpuInput gpu, const CollectionWindow& window) {
  stream.stop_flushing();
  Capture capture;
  try {
    capture = read_capture_file(stream.path()).capture;
  } catch (const std::exception&) {
    // Nothing of the file is readable: what it held is counted below as dropped.
  }
  const uint64_t appended = stream.events_appended();
  const uint64_t read_back = host_event_count(capture);
  capture.host.dropped_events += appended > read_back ? appended - read_back : 0;
  Capture tail = capture_of_this_process(std::move(rest), std::move(gpu), window);
  if (stream.ok()) {
    stream.append(tail.host);
    stream.finish(tail.gpu, window);
  }
  append_capture(capture, std::move(tail));
  return capture;
}

}  // namespace perfprof
