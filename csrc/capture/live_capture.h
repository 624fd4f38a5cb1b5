#pragma once
// What the running process contributes to its captures: its id and name, the clock offset, the
// strings and argument sets the events use, the names the OS gives threads that recorded nothing
// themselves.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "capture/capture.h"

namespace perfprof {

ProcessInfo this_process();

// Entries of the process's interned tables, indexed by id (ids not used are empty).
struct Vocabulary {
  std::vector<std::string> strings;
  std::vector<ArgSet> arg_sets;
};

// The argument sets `host` and `gpu` refer to, and every string they or the events refer to.
Vocabulary vocabulary_used_by(const CollectedEvents& host, const GpuInput& gpu);

// The OS's names of the threads `host` and `gpu` refer to without a buffer of their own and not
// in `named`, which they are added to (a thread that has exited stays unnamed: the trace calls
// it by its id).
std::vector<ThreadName> name_other_threads(const CollectedEvents& host, const GpuInput& gpu,
                                           std::unordered_set<int64_t>& named);

// A whole session's capture, made where it was recorded.
Capture capture_of_this_process(CollectedEvents host, GpuInput gpu, const CollectionWindow& window);

}  // namespace perfprof
