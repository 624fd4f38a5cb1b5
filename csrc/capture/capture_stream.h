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
#include "capture/capture_lock.h"
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

  // Moves what the recorder holds into the file (once the file cannot be written, into the
  // stream's memory instead: see events_held_back()).
  void append_recorded();
  // Appends `host` (the strings it uses, then its events). Each append reaches the file whole
  // or not at all: when a write fails (disk full) the file is cut back to what it held before
  // and `host` is held back in memory, as is everything appended after.
  void append(const CollectedEvents& host);
  // Appends run metadata (written at once: a killed process keeps what was added); nothing once
  // the capture is ended.
  void add_metadata(const RunMetadata& entry);
  // From now on a thread of the stream's appends what the recorder holds whenever its thread
  // buffers hold more than half of `cap_bytes` (the other half: the copy being written).
  void start_flushing(uint64_t cap_bytes);
  void stop_flushing();
  // Appends what GPU collection handed over and the window, and ends the capture. False when it
  // could not all be written: the file is then cut back to what it held before, so it holds
  // none of `gpu` and the caller keeps it. Either way the file is no longer being written: its
  // writer lock (capture_lock.h), held since it was created, is given up.
  bool finish(const GpuInput& gpu, const CollectionWindow& window);
  // Appends `host`, then finishes; false (the file cut back to what it held before: none of
  // `host` either) when it could not all be written.
  bool finish_with(const CollectedEvents& host, const GpuInput& gpu, const CollectionWindow& window);

  const std::string& path() const { return path_; }
  // Whether the file was removed (or replaced) from `path` while the stream wrote it; its
  // events are then read back from the open file.
  bool removed() const;
  std::string readable_path() const;  // where the file written can be read back from
  bool ok() const;
  std::string error() const { return sink_.error(); }  // why the capture could not be written
  uint64_t events_appended() const;  // events in the file
  uint64_t cap_flushes() const;      // appends made because the cap was reached
  // Host events the file lacks because it could not take them (held back in memory, or left
  // out of a failed finish): the trace complete_capture builds has them, the file does not.
  uint64_t events_held_back() const;
  // The events held back, for the caller to finish the file with (no longer counted: a finish
  // that fails counts them again).
  CollectedEvents take_held_back();
  // Events neither written nor held back (no memory to keep them in): counted as dropped.
  uint64_t events_lost() const;

 private:
  // Appends `host` whole, or cuts the file back and returns false.
  bool append_locked(const CollectedEvents& host, const GpuInput& gpu) noexcept;
  // finish_with's writing (mutex_ held): `host`, `gpu`, the window and the end, whole or not at all.
  bool end_locked(const CollectedEvents& host, const GpuInput& gpu, const CollectionWindow& window);
  void append_or_hold_back(CollectedEvents host) noexcept;
  bool writable() const;  // mutex_ held
  void flush_at_cap(uint64_t cap_events);

  const std::string path_;
  mutable std::mutex mutex_;  // one append at a time, so each thread's events reach the file in order
  FileSink sink_;
  WriterLock writer_lock_;  // taken before the first byte is written: a reader never sees the file unlocked while live
  CaptureWriter writer_;
  std::unordered_set<int64_t> named_threads_;
  uint64_t events_appended_ = 0;
  uint64_t cap_flushes_ = 0;
  CollectedEvents held_back_;
  uint64_t events_held_back_ = 0;
  uint64_t events_lost_ = 0;  // neither written nor held back: out of memory
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
