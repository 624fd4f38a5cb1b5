#include "capture/live_capture.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/string_table.h"

namespace perfprof {
namespace {

std::string first_line_of(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// The ids of every string the events refer to.
class UsedStrings {
 public:
  void mark(StringId id) {
    if (id >= used_.size()) used_.resize(std::max<size_t>(id + 1, used_.size() * 2), false);
    used_[id] = true;
  }
  void mark_all(const Capture& capture) {
    mark(kEmptyString);
    for (const ThreadEvents& thread : capture.host.threads) {
      for (const RawEvent& event : thread.events) mark_event(event);
    }
    for (const CompletedRange& range : capture.host.completed) {
      mark(range.name);
      mark(range.category);
      mark(range.args);
    }
    for (const memory::Allocation& allocation : capture.host.memory.allocations) mark(allocation.op);
    for (const GpuActivity& activity : capture.gpu.collected.activities) mark(activity.name);
    for (const ApiCall& call : capture.gpu.collected.api_calls) mark(call.name);
  }
  const std::vector<bool>& ids() const { return used_; }

 private:
  void mark_event(const RawEvent& event) {
    mark(event.name);
    mark(event.category);
    mark(event.args);
  }
  std::vector<bool> used_;
};

// Threads the events name by OS id that have no buffer of their own, named as the OS names them
// now (a thread that has exited is left unnamed: the trace calls it by its id).
std::vector<ThreadName> other_thread_names(const Capture& capture) {
  std::unordered_set<int64_t> known;
  for (const ThreadEvents& thread : capture.host.threads) known.insert(thread.os_tid);
  std::vector<int64_t> others;
  const auto note = [&](int64_t os_tid) {
    if (known.insert(os_tid).second) others.push_back(os_tid);
  };
  for (const CompletedRange& range : capture.host.completed) note(range.os_tid);
  for (const memory::Allocation& allocation : capture.host.memory.allocations) note(allocation.os_tid);
  for (const ApiCall& call : capture.gpu.collected.api_calls) note(call.os_tid);
  std::vector<ThreadName> names;
  for (const int64_t os_tid : others) {
    std::string name = first_line_of("/proc/self/task/" + std::to_string(os_tid) + "/comm");
    if (!name.empty()) names.push_back({os_tid, std::move(name)});
  }
  return names;
}

}  // namespace

Capture capture_of_this_process(CollectedEvents host, GpuInput gpu, const CollectionWindow& window) {
  Capture capture;
  capture.host = std::move(host);
  capture.gpu = std::move(gpu);
  capture.window = window;
  const std::string process_name = first_line_of("/proc/self/comm");
  capture.process = {getpid(), process_name.empty() ? "process" : process_name, monotonic_to_unix_offset_ns()};
  UsedStrings used;
  used.mark_all(capture);
  capture.strings = global_strings().snapshot(used.ids());
  capture.other_threads = other_thread_names(capture);
  return capture;
}

}  // namespace perfprof
