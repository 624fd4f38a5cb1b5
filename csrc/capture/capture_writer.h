#pragma once
// Writes a capture chunk by chunk (docs/formats/capture.md), for a whole capture at once
// (write_capture) or for one written while its session records (CaptureStream). Never throws
// for the sink: after its first failure nothing more is written and ok() is false.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capture/capture.h"
#include "capture/capture_format.h"
#include "capture/sink.h"

namespace perfprof {

class CaptureWriter {
 public:
  explicit CaptureWriter(Sink& sink);  // writes the file header

  void process(const ProcessInfo& process);
  // The texts of `strings` (indexed by id) not written before; empty texts are never written.
  void strings(const std::vector<std::string>& strings);
  // The same for argument sets; the strings they use must have been written.
  void arg_sets(const std::vector<ArgSet>& sets);
  // Each thread (its Thread chunk when it is new or renamed), its events, and the rest; the
  // strings and argument sets they use must have been written.
  void host(const CollectedEvents& host);
  void other_threads(const std::vector<ThreadName>& threads);
  void gpu(const GpuInput& gpu);
  void window(const CollectionWindow& window);
  void metadata(const std::vector<RunMetadata>& entries);
  void end();

  bool ok() const { return ok_; }

 private:
  template <typename Encode>
  void chunk(capture_format::ChunkKind kind, Encode&& encode);
  // A chunk whose payload is what `encode` writes followed by `raw`, which is written from where
  // it is (a thread's events: no copy of them is made).
  template <typename Encode>
  void chunk(capture_format::ChunkKind kind, Encode&& encode, std::string_view raw);
  void thread(const ThreadEvents& thread);
  // The entries of an interned table (indexed by id) not written before, empty ones never.
  template <typename T>
  void new_entries(capture_format::ChunkKind kind, const std::vector<T>& table, std::vector<bool>& written);
  void emit(std::string_view bytes);

  Sink& sink_;
  std::string payload_;
  bool ok_ = true;
  std::vector<bool> written_strings_;                      // by id
  std::vector<bool> written_arg_sets_;                     // by id
  std::unordered_map<uint32_t, std::string> thread_names_;  // by buffer index, as last written
};

}  // namespace perfprof
