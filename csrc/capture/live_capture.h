#pragma once
// What the running process contributes to its captures: its id and name, the clock offset, the
// text of the strings the events use, the names the OS gives threads that recorded nothing
// themselves.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "capture/capture.h"

namespace perfprof {

ProcessInfo this_process();

// The text of every string `host` and `gpu` refer to, indexed by id (other ids empty).
std::vector<std::string> strings_used_by(const CollectedEvents& host, const GpuInput& gpu);

// The OS's names of the threads `host` and `gpu` refer to without a buffer of their own and not
// in `named`, which they are added to (a thread that has exited stays unnamed: the trace calls
// it by its id).
std::vector<ThreadName> name_other_threads(const CollectedEvents& host, const GpuInput& gpu,
                                           std::unordered_set<int64_t>& named);

// A whole session's capture, made where it was recorded.
Capture capture_of_this_process(CollectedEvents host, GpuInput gpu, const CollectionWindow& window);

}  // namespace perfprof
