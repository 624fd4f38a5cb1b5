#include "capture/live_capture.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/args.h"
#include "common/string_table.h"

namespace perfprof {
namespace {

std::string first_line_of(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// Marks of the ids in use of one interned table.
class UsedIds {
 public:
  UsedIds() { mark(0); }  // the empty entry
  template <typename... Ids>
  void mark(Ids... ids) {
    for (const uint32_t id : {static_cast<uint32_t>(ids)...}) {
      if (id >= used_.size()) used_.resize(std::max<size_t>(size_t{id} + 1, used_.size() * 2), false);
      used_[id] = true;
    }
  }
  const std::vector<bool>& ids() const { return used_; }

 private:
  std::vector<bool> used_;
};

void mark_strings(const ArgValue& value, UsedIds& strings) {
  if (const auto* text = std::get_if<StringId>(&value)) strings.mark(*text);
  if (const auto* texts = std::get_if<std::vector<StringId>>(&value)) {
    for (const StringId id : *texts) strings.mark(id);
  }
}

}  // namespace

// The argument sets the events refer to, then every string either refers to.
Vocabulary vocabulary_used_by(const CollectedEvents& host, const GpuInput& gpu) {
  UsedIds strings, arg_sets;
  for (const ThreadEvents& thread : host.threads) {
    for (const RawEvent& event : thread.events) {
      strings.mark(event.name);
      arg_sets.mark(event.args);
    }
  }
  for (const CompletedRange& range : host.completed) {
    strings.mark(range.name);
    arg_sets.mark(range.args);
  }
  for (const memory::Allocation& allocation : host.memory.allocations) strings.mark(allocation.op);
  for (const GpuActivity& activity : gpu.collected.activities) strings.mark(activity.name);
  for (const ApiCall& call : gpu.collected.api_calls) strings.mark(call.name);
  Vocabulary used;
  used.arg_sets = global_arg_sets().snapshot(arg_sets.ids());
  for (const ArgSet& set : used.arg_sets) {
    for (const Arg& arg : set.args) mark_strings(arg.value, strings);
  }
  used.strings = global_strings().snapshot(strings.ids());
  return used;
}

ProcessInfo this_process() {
  const std::string name = first_line_of("/proc/self/comm");
  return {getpid(), name.empty() ? "process" : name, monotonic_to_unix_offset_ns()};
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
  Vocabulary used = vocabulary_used_by(host, gpu);
  capture.strings = std::move(used.strings);
  capture.arg_sets = std::move(used.arg_sets);
  std::unordered_set<int64_t> named;
  capture.other_threads = name_other_threads(host, gpu, named);
  capture.host = std::move(host);
  capture.gpu = std::move(gpu);
  capture.window = window;
  return capture;
}

}  // namespace perfprof
