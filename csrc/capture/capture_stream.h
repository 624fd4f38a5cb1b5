#pragma once
// A capture written while its session records. Each append() moves what the recorder handed
// over into chunks at the end of the file, so the process holds at most one append's events, and
// a process killed while recording leaves a capture holding everything appended before the kill
// (docs/formats/capture.md: a cut capture is read up to its last whole chunk).
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "capture/capture.h"
#include "capture/capture_writer.h"
#include "capture/sink.h"

namespace perfprof {

class CaptureStream {
 public:
  // Creates the capture at `path` and writes what is known of the process.
  explicit CaptureStream(const std::string& path);

  // Appends `host` (the strings it uses, then its events).
  void append(const CollectedEvents& host);
  // Appends what GPU collection handed over and the window, and ends the capture.
  void finish(const GpuInput& gpu, const CollectionWindow& window);

  const std::string& path() const { return path_; }
  bool ok() const { return writer_.ok(); }
  std::string error() const { return sink_.error(); }  // why the capture could not be written
  uint64_t events_appended() const { return events_appended_; }

 private:
  void append(const CollectedEvents& host, const GpuInput& gpu);

  std::string path_;
  FileSink sink_;
  CaptureWriter writer_;
  std::unordered_set<int64_t> named_threads_;
  uint64_t events_appended_ = 0;
};

// The whole capture of a session streamed to `stream`: what its file holds, read back, and
// `rest` (what the recorder holds at the end, the GPU records). The file is then ended with
// `rest`, so it holds the whole session too. Events a failed write kept out of the file are
// counted as dropped (after a failure the caller stops appending: what is still in memory stays).
Capture complete_capture(CaptureStream& stream, CollectedEvents rest, GpuInput gpu, const CollectionWindow& window);

}  // namespace perfprof
