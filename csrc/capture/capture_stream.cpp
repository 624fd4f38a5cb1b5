#include "capture/capture_stream.h"

#include <chrono>
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

}  // namespace

CaptureStream::CaptureStream(const std::string& path) : path_(path), sink_(path), writer_(sink_) {
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

void CaptureStream::append_locked(const CollectedEvents& host, const GpuInput& gpu) {
  writer_.strings(strings_used_by(host, gpu));
  writer_.other_threads(name_other_threads(host, gpu, named_threads_));
  writer_.host(host);
  for (const ThreadEvents& thread : host.threads) events_appended_ += thread.events.size();
}

void CaptureStream::start_flushing(uint64_t cap_bytes) {
  stop_flushing();
  flusher_stop_ = false;
  const uint64_t cap_events = cap_bytes / 2 / sizeof(RawEvent);
  flusher_ = std::thread([this, cap_events] { flush_at_cap(cap_events); });
}

void CaptureStream::stop_flushing() {
  if (!flusher_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(flusher_mutex_);
    flusher_stop_ = true;
  }
  flusher_wake_.notify_all();
  flusher_.join();
}

void CaptureStream::flush_at_cap(uint64_t cap_events) {
  std::unique_lock<std::mutex> wait_lock(flusher_mutex_);
  while (!flusher_wake_.wait_for(wait_lock, kFlushPoll, [this] { return flusher_stop_; })) {
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
