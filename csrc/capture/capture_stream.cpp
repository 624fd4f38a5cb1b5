#include "capture/capture_stream.h"

#include <unistd.h>

#include <pthread.h>

#include <chrono>
#include <set>
#include <exception>
#include <new>
#include <utility>

#include <fmt/format.h>

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
    : path_(path), sink_(path), writer_lock_(sink_.descriptor()), writer_(sink_), owner_pid_(getpid()) {
  writer_.process(this_process());
}

CaptureStream::~CaptureStream() { stop_flushing(); }

bool CaptureStream::ok() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writable();
}

bool CaptureStream::writable() const { return writer_.ok() && !sink_.failed(); }

std::string CaptureStream::readable_path() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sink_.readable_path();
}

bool CaptureStream::removed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sink_.moved();
}

uint64_t CaptureStream::events_appended() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_appended_;
}

uint64_t CaptureStream::cap_flushes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cap_flushes_;
}

uint64_t CaptureStream::events_lost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_lost_;
}

uint64_t CaptureStream::events_held_back() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_held_back_;
}

CollectedEvents CaptureStream::take_held_back() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Handed to the caller, which finishes the file with them: counted again if that fails.
  events_held_back_ -= event_count(held_back_);
  return std::exchange(held_back_, {});
}

void CaptureStream::append_recorded() {
  std::lock_guard<std::mutex> lock(mutex_);
  append_or_hold_back(Recorder::instance().collect());
}

void CaptureStream::append(const CollectedEvents& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_or_hold_back(host);
}

void CaptureStream::append_or_hold_back(CollectedEvents host) noexcept {
  if (writable() && append_locked(host, GpuInput{})) return;
  const uint64_t events = event_count(host);
  try {
    append_collected(held_back_, std::move(host));
    events_held_back_ += events;
  } catch (const std::bad_alloc&) {
    events_lost_ += events;  // no memory to keep them in either
  }
}

void CaptureStream::add_metadata(const RunMetadata& entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ended_) writer_.metadata({entry});
}

bool CaptureStream::append_locked(const CollectedEvents& host, const GpuInput& gpu) noexcept {
  const uint64_t size_before = sink_.size();
  try {
    const Vocabulary used = vocabulary_used_by(host, gpu);
    writer_.strings(used.strings);
    writer_.arg_sets(used.arg_sets);
    writer_.other_threads(name_other_threads(host, gpu, named_threads_));
    writer_.host(host);
    if (writable()) {
      events_appended_ += event_count(host);
      return true;
    }
  } catch (const std::bad_alloc&) {
    // Out of memory encoding: the file is cut back as after a failed write, and ends here.
    sink_.abandon(fmt::format("out of memory writing {}", path_));
  }
  sink_.cut_to(size_before);
  return false;
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
    if (!writable()) return;  // nothing more leaves the recorder before stop
    append_or_hold_back(Recorder::instance().collect());
    ++cap_flushes_;
  }
}

bool CaptureStream::finish(const GpuInput& gpu, const CollectionWindow& window) {
  return finish_with(CollectedEvents{}, gpu, window);
}

bool CaptureStream::finish_with(const CollectedEvents& host, const GpuInput& gpu, const CollectionWindow& window) {
  stop_flushing();
  std::lock_guard<std::mutex> lock(mutex_);
  ended_ = true;
  const bool ended = end_locked(host, gpu, window);
  writer_lock_.release();  // ended, or unable to take more: no longer being written
  return ended;
}

bool CaptureStream::end_locked(const CollectedEvents& host, const GpuInput& gpu, const CollectionWindow& window) {
  const uint64_t size_before = sink_.size();
  const uint64_t appended_before = events_appended_;
  if (writable() && append_locked(host, gpu)) {
    try {
      writer_.gpu(gpu);
      writer_.window(window);
      writer_.end();
      if (writable()) return true;
    } catch (const std::bad_alloc&) {
    }
    sink_.cut_to(size_before);
    events_appended_ = appended_before;
  }
  events_held_back_ += event_count(host);
  return false;
}

Capture complete_capture(CaptureStream& stream, CollectedEvents rest, GpuInput gpu, const CollectionWindow& window) {
  stream.stop_flushing();
  // The file is ended first, so whatever happens while it is read back (running out of memory
  // building a long session, say) it holds the whole session for `perfprof analyse`.
  CollectedEvents unwritten = stream.take_held_back();
  append_collected(unwritten, std::move(rest));
  Capture tail = capture_of_this_process(std::move(unwritten), std::move(gpu), window);
  const bool tail_in_file = stream.finish_with(tail.host, tail.gpu, window);
  Capture capture;
  try {
    capture = read_capture_file(stream.readable_path()).capture;
  } catch (const std::runtime_error&) {
    // Nothing of the file is readable: what it held is counted below as dropped. Running out of
    // memory is not caught: the caller reports it, and the ended file keeps the session.
  }
  const uint64_t appended = stream.events_appended();
  const uint64_t read_back = host_event_count(capture);
  capture.host.dropped_events += (appended > read_back ? appended - read_back : 0) + stream.events_lost();
  if (!tail_in_file) append_capture(capture, std::move(tail));
  return capture;
}

}  // namespace perfprof
