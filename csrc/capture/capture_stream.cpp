#include "capture/capture_stream.h"

#include "capture/live_capture.h"

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

}  // namespace perfprof
