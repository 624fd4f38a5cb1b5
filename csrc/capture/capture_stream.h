#pragma once
// A capture written while its session records. Each append moves what the recorder handed over
// into chunks at the end of the file, so a process killed while recording leaves a capture
// holding everything appended before the kill (docs/formats/capture.md: a cut capture is read up
// to its last whole chunk). Appends come at the end of each step, and from a thread of the
// stream's own whenever the recorder holds more than a cap: recording never holds much more.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "capture/capture.h"
#include "capture/capture_writer.h"
#include "capture/sink.h"

namespace perfprof {

class CaptureStream {
 public:
  // Creates the capture at `path` and writes what is known of the process.
  explicit CaptureStream(const std::string& path);
  ~CaptureStream();
  CaptureStream(const CaptureStream&) = delete;
  CaptureStream& operator=(const CaptureStream&) = delete;

  // Moves what the recorder holds into the file (nothing once the file cannot be written: the
  // events then stay in memory).
  void append_recorded();
  // Appends `host` (the strings it uses, then its events).
  void append(const CollectedEvents& host);
  // Appends run metadata (written at once: a killed process keeps what was added); nothing once
  // the capture is ended.
  void add_metadata(const RunMetadata& entry);
  // From now on a thread of the stream's appends what the recorder holds whenever its thread
  // buffers hold more than half of `cap_bytes` (the other half: the copy being written).
  void start_flushing(uint64_t cap_bytes);
  void stop_flushing();
  // Appends what GPU collection handed over and the window, and ends the capture.
  void finish(const GpuInput& gpu, const CollectionWindow& window);

  const std::string& path() const { return path_; }
  bool ok() const;
  std::string error() const { return sink_.error(); }  // why the capture could not be written
  uint64_t events_appended() const;
  uint64_t cap_flushes() const;  // appends made because the cap was reached

 private:
  void append_locked(const CollectedEvents& host, const GpuInput& gpu);
  void flush_at_cap(uint64_t cap_events);

  const std::string path_;
  mutable std::mutex mutex_;  // one append at a time, so each thread's events reach the file in order
  FileSink sink_;
  CaptureWriter writer_;
  std::unordered_set<int64_t> named_threads_;
  uint64_t events_appended_ = 0;
  uint64_t cap_flushes_ = 0;
  bool ended_ = false;
  // The flushing thread and what it waits on.
  struct Flusher {
    std::mutex mutex;  // held by the thread whenever it is not waiting
    std::condition_variable wake;
    bool stop = false;
    std::thread thread;
  };

  const int64_t owner_pid_;  // a forked child's copy has no flushing thread to stop
  std::unique_ptr<Flusher> flusher_;
};

// The whole capture of a session streamed to `stream`: what its file holds, read back, and
// `rest` (what the recorder holds at the end, the GPU records). The file is then ended with
// `rest`, so it holds the whole session too. Events a failed write kept out of the file are
// counted as dropped (after a failure nothing more leaves memory).
Capture complete_capture(CaptureStream& stream, CollectedEvents rest, GpuInput gpu, const CollectionWindow& window);

}  // namespace perfprof
