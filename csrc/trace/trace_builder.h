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

// An mstx range that was given a CUDA stream (CUPTI's id for it).
struct StreamAnnotation {
  uint64_t range_id = 0;
  uint32_t stream = 0;
};

struct GpuInput {
  GpuCollected collected;
  std::vector<StreamAnnotation> stream_annotations;
  bool collected_any = false;  // GPU collection ran (even if it saw nothing)
};

TraceModel build_trace(CollectedEvents collected, const CollectionWindow& window, GpuInput gpu = {});

}  // namespace perfprof
