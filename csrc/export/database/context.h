#pragma once
// What every table writer of the run database shares: the trace, its strings with the texts the
// database adds (StringIds), and how times and threads are written.
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analysed_trace.h"
#include "export/database/sqlite.h"

namespace perfprof::db {

// What the database says about its run beyond the trace (META_DATA).
struct DatabaseOptions {
  std::vector<std::pair<std::string, std::string>> metadata;  // name -> value (JSON text)
  int rank = 0;
  int world_size = 1;
  std::string distributed_backend;  // empty: not distributed
};

// The StringIds table: the model's strings keep their ids; texts the database makes (input
// shapes, thread names, enum names) get the next ones, each distinct text once.
class DatabaseStrings {
 public:
  explicit DatabaseStrings(const std::vector<std::string>& model_strings);
  StringId id(std::string_view text);
  // Every string in id order (model strings first).
  size_t size() const { return model_strings_.size() + added_.size(); }
  std::string_view text(StringId id) const {
    return id < model_strings_.size() ? std::string_view(model_strings_[id]) : std::string_view(added_[id - model_strings_.size()]);
  }

 private:
  const std::vector<std::string>& model_strings_;
  std::deque<std::string> added_;  // deque: the map's keys stay valid as it grows
  std::unordered_map<std::string_view, StringId> ids_;  // keys point into the two lists
};

// Nsight Systems' encoding of a process and a thread in one integer (globalPid, globalTid):
// the pid in bits 24-47, the tid in bits 0-23 (queries take them apart with
// `globalTid / 0x1000000 % 0x1000000 AS PID, globalTid % 0x1000000 AS TID`).
inline constexpr int64_t kGlobalIdShift = 0x1000000;
inline int64_t global_pid(int64_t pid) { return pid * kGlobalIdShift; }
inline int64_t global_tid(int64_t pid, int64_t tid) { return pid * kGlobalIdShift + tid % kGlobalIdShift; }

struct Context {
  Context(Database& database, const AnalysedTrace& trace)
      : db(database), trace(trace), model(trace.model()), strings(model.strings) {}

  // Times are Unix-epoch nanoseconds: the trace's clock plus its Unix offset (the Chrome trace's
  // ts * 1000 + baseTimeNanoseconds), so ranks' databases line up and differences are exact.
  int64_t time(int64_t now_ns) const { return now_ns + model.unix_offset_ns; }
  int64_t thread(uint32_t track) const { return global_tid(model.pid, model.threads[track].os_tid); }

  Database& db;
  const AnalysedTrace& trace;
  const TraceModel& model;
  DatabaseStrings strings;
};

}  // namespace perfprof::db
