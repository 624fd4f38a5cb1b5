#pragma once
// One fuzz case: a capture's bytes through what `perfprof analyse` does with a capture file
// (read it, build the trace, write every export), checked against the reader's guarantees
// (docs/formats/capture.md, "A reader of untrusted bytes").
#include <cstdint>
#include <string>
#include <string_view>

namespace perfprof::fuzz {

enum class Outcome {
  Refused,     // not a capture this perfprof reads: one CaptureFormatError
  Incomplete,  // read up to a problem (cut short, corrupt chunk), the rest built and exported
  Complete,    // read whole, built and exported
  Failed,      // a guarantee broken: `failure` says which
};

struct CaseResult {
  Outcome outcome = Outcome::Failed;
  std::string failure;      // what went wrong, for Failed
  uint64_t peak_bytes = 0;  // the most operator new held at once for the case
};

// The memory a case may take: 4 times the capture's size and 200 MiB.
uint64_t memory_budget(uint64_t capture_bytes);

// Runs `bytes` as a capture: from a file in `dir` when `from_file`, else from memory. Exports go
// to `dir`; every `database_every`th case also writes the run database (SQLite is the slowest).
CaseResult run_case(std::string_view bytes, const std::string& dir, bool from_file, bool with_database);

}  // namespace perfprof::fuzz
