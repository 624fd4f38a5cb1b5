#pragma once
// Chrome trace event format (JSON) writer: opens in Perfetto UI and chrome://tracing, and loads
// in HolisticTraceAnalysis and the TensorBoard profiler plugin. Streams text; never builds a DOM.
#include <string>
#include <utility>
#include <vector>

#include "analysis/analysed_trace.h"

namespace perfprof {

struct ChromeTraceOptions {
  // Extra top-level members: key -> JSON value text (already validated by the caller).
  std::vector<std::pair<std::string, std::string>> metadata;
  int rank = 0;
  int world_size = 1;
  std::string distributed_backend;  // empty: not distributed
  int gzip_level = 1;
};

// Writes `trace` to `path` (gzip-compressed when it ends in ".gz"): its model, Python frames
// linked to their callers through its tree, GPU activities with their metrics. Throws
// std::runtime_error naming the path on I/O errors; the target is then left untouched.
void write_chrome_trace(const AnalysedTrace& trace, const std::string& path, const ChromeTraceOptions& options);

// An argument set of `model` as the members of an event's "args" (without the braces), named
// and written as the trace writes them; keys this perfprof does not know are left out.
std::string arg_members_json(const ArgSet& set, const TraceModel& model);

}  // namespace perfprof
