#pragma once
// Turns the raw per-thread event streams into a TraceModel: pairs range begins with their ends
// (by range id, so ends on other threads pair too) and classifies what nests.
#include "capture/capture.h"
#include "trace/trace_model.h"

namespace perfprof {

// Pure: the capture is the only input, so a capture built where it was recorded and one read
// back from its file give the same model.
TraceModel build_trace(Capture capture);

}  // namespace perfprof
