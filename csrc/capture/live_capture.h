#pragma once
// The capture of a session in the running process: what was collected, completed with what only
// the process can tell (its id and name, thread names from /proc, the clock offset, the text of
// the strings the events use).
#include "capture/capture.h"

namespace perfprof {

Capture capture_of_this_process(CollectedEvents host, GpuInput gpu, const CollectionWindow& window);

}  // namespace perfprof
