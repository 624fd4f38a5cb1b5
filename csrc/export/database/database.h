#pragma once
// The run database: one SQLite file per run with Nsight Systems' tables where the data is the
// same and torch_npu's for the PyTorch side (docs/formats/database.md).
#include <string>

#include "analysis/analysed_trace.h"
#include "export/database/context.h"

namespace perfprof {

// Writes `trace` to a new SQLite database at `path` (replacing one already there), in one
// transaction into a temporary file renamed into place. Throws std::runtime_error naming the
// path when it cannot be written; an existing file is then left untouched.
void write_database(const AnalysedTrace& trace, const std::string& path, const db::DatabaseOptions& options);

}  // namespace perfprof
