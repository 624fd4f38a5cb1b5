#include "capture/live_capture.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
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
  UsedStrings(const CollectedEvents& host, const GpuInput& gpu) {
    mark(kEmptyString);
    for (const ThreadEvents& thread : host.threads) {
      for (const RawEvent& event : thread.events) mark(event.name, event.category, event.args);
    }
    for (const CompletedRange& range : host.completed) mark(range.name, range.category, range.args);
    for (const memory::Allocation& allocation : host.memory.allocations) mark(allocation.op);
    for (const GpuActivity& activity : gpu.collected.activities) mark(activity.name);
    for (const ApiCall& call : gpu.collected.api_calls) mark(call.name);
  }
  const std::vector<bool>& ids() const { return used_; }

 private:
  template <typename... Ids>
  void mark(Ids... ids) {
    for (const StringId id : {ids...}) {
      if (id >= used_.size()) used_.resize(std::max<size_t>(size_t{id} + 1, used_.size() * 2), false);
      used_[id] = true;
    }
  }
  std::vector<bool> used_;
};

}  // namespace

ProcessInfo this_process() {
  const std::string name = first_line_of("/proc/self/comm");
  return {getpid(), name.empty() ? "process" : name, monotonic_to_unix_offset_ns()};
}

std::vector<std::string> strings_used_by(const CollectedEvents& host, const GpuInput& gpu) {
  return global_strings().snapshot(UsedStrings(host, gpu).ids());
}

std::vector<ThreadName> name_other_threads(const CollectedEvents& host, const GpuInput& gpu,
                                           std::unordered_set<int64_t>& named) {
  for (const ThreadEvents& thread : host.threads) named.insert(thread.os_tid);
  std::vector<int64_t> others;
  const auto note = [&](int64_t os_tid) {
    if (named.insert(os_tid).second) others.push_back(os_tid);
  };
  for (const CompletedRange& range : host.completed) note(range.os_tid);
  for (const memory::Allocation& allocation : host.memory.allocations) note(allocation.os_tid);
  for (const ApiCall& call : gpu.collected.api_calls) note(call.os_tid);
  std::vector<ThreadName> names;
  for (const int64_t os_tid : others) {
    std::string name = first_line_of("/proc/self/task/" + std::to_string(os_tid) + "/comm");
    if (!name.empty()) names.push_back({os_tid, std::move(name)});
  }
  return names;
}

Capture capture_of_this_process(CollectedEvents host, GpuInput gpu, const CollectionWindow& window) {
  Capture capture;
  capture.process = this_process();
  capture.strings = strings_used_by(host, gpu);
  std::unordered_set<int64_t> named;
  capture.other_threads = name_other_threads(host, gpu, named);
  capture.host = std::move(host);
  capture.gpu = std::move(gpu);
  capture.window = window;
  return capture;
}

}  // namespace perfprof
