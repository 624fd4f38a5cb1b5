#pragma once
// Helpers shared by the C++ tests: temporary directories, file reading, hand-made events and a
// guard for the process-wide recorder.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/args.h"
#include "common/string_table.h"
#include "record/event.h"
#include "record/recorder.h"

namespace perfprof::test {

// A fresh directory under the system temporary directory, removed with its contents on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(std::string_view name) const { return (path_ / name).string(); }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, std::string_view content);
// Decompresses a gzip file with zlib; fails the current test on a corrupt stream.
std::string read_gzip_file(const std::string& path);

// Interns in the global table, the one build_trace snapshots.
inline StringId intern(std::string_view text) { return global_strings().intern(text); }

// One-argument sets, their texts interned in the global table.
ArgSet int_arg(ArgKey key, int64_t value);
ArgSet text_arg(ArgKey key, std::string_view text);
// Input shapes as torch's hooks give them ("[[8, 64], []]"); fails the test on another text.
ArgSet input_dims_arg(std::string_view dims);

// The kind whose torch.profiler category is `category` (UserAnnotation for "user_annotation",
// Step for a user annotation named ProfilerStep#N, as the schedule records it); Other for any
// other text.
RangeKind kind_named(std::string_view category, std::string_view name = "");

// Hand-made raw events, for deterministic trace-builder and exporter tests: their kind is the one
// `category` and `name` give (kind_named), their args are interned in the global table.
RawEvent begin_event(int64_t ts_ns, uint64_t id, std::string_view name,
                     std::string_view category = "", const ArgSet& args = {});
RawEvent end_event(int64_t ts_ns, uint64_t id);
RawEvent instant_event(int64_t ts_ns, std::string_view name, std::string_view category = "",
                       const ArgSet& args = {});
RawEvent counter_event(int64_t ts_ns, std::string_view name, double value);

ThreadEvents thread_events(uint32_t index, int64_t os_tid, std::string name,
                           std::vector<RawEvent> events);

// Starts from an empty recorder with `channels` on; turns every channel off and drops what is
// left on destruction. The recorder is a process-wide singleton, so every test using it needs
// one of these.
class RecorderSession {
 public:
  explicit RecorderSession(uint32_t channels);
  ~RecorderSession();
  RecorderSession(const RecorderSession&) = delete;
  RecorderSession& operator=(const RecorderSession&) = delete;
};

// Every event collected from all threads, in collection order.
std::vector<RawEvent> all_events(const CollectedEvents& collected);

}  // namespace perfprof::test
