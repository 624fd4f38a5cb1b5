#pragma once
// Turns the raw per-thread event streams into a TraceModel: pairs range begins with their ends
// (by range id, so ends on other threads pair too) and classifies what nests.
#include <cstdint>

#include "record/recorder.h"
#include "trace/trace_model.h"

namespace perfprof {

struct CollectionWindow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

TraceModel build_trace(CollectedEvents collected, const CollectionWindow& window);

}  // namespace perfprof
