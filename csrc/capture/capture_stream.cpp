#include "capture/capture_stream.h"

#include "capture/capture_file.h"
#include "capture/live_capture.h"

#include <exception>
#include <utility>

namespace perfprof {

CaptureStream::CaptureStream(const std::string& path) : path_(path), sink_(path), writer_(sink_) {
  writer_.process(this_process());
}

void CaptureStream::append(const CollectedEvents& host) { append(host, GpuInput{}); }

void CaptureStream::append(const CollectedEvents& host, const GpuInput& gpu) {
  writer_.strings(strings_used_by(host, gpu));
  writer_.other_threads(name_other_threads(host, gpu, named_threads_));
  writer_.host(host);
  for (const ThreadEvents& thread : host.threads) events_appended_ += thread.events.size();
}

void CaptureStream::finish(const GpuInput& gpu, const CollectionWindow& window) {
  append(CollectedEvents{}, gpu);
  writer_.gpu(gpu);
  writer_.window(window);
  writer_.end();
}

Capture complete_capture(CaptureStream& stream, CollectedEvents rest, GpuInput gpu, const CollectionWindow& window) {
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
