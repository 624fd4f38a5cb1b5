#pragma once
// A Chrome trace as a trace model: what torch.profiler (export_chrome_trace,
// tensorboard_trace_handler: Kineto's format, .json or .json.gz) or perfprof wrote, read in one
// streaming pass into a capture and built like any other capture (trace/trace_builder.h), so an
// imported trace and a profiled one give the same model, and every export (the run database
// first) one definition of each table. docs/analysis.md says what an import gives and lacks.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "import/json_reader.h"
#include "import/trace_header.h"
#include "trace/trace_model.h"

namespace perfprof {

struct ImportedTrace {
  TraceModel model;
  DistributedInfo distributed;
  // The trace's top-level members that describe the run ("trace_id", "host_name", a user's
  // metadata...): (name, the value's JSON text), in file order. Scalars only.
  std::vector<std::pair<std::string, std::string>> metadata;
  // One line: what the model leaves out (events of kinds it has no place for, counted by kind)
  // and what the trace lacks that analyses read (GPU activity, memory events, steps, shapes).
  // Empty when neither.
  std::string notes;
};

// Reads the Chrome trace at `path`. Throws TraceImportError (one line naming the file and what
// was wrong: a byte offset for malformed JSON, an event's index for a bad field) for a file
// that is not a trace this reader understands, or that cannot be read.
ImportedTrace import_chrome_trace(const std::string& path);

}  // namespace perfprof
