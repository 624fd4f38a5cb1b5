#pragma once
// The one interface every output format implements (docs/design.md, "Exporters"): an exporter
// is made with what its format needs beyond the trace (metadata, a device, a metric) and writes
// an analysed trace to a path. The Python module, the run directory and `perfprof analyse` all
// write through it, so a new format (the run database, CSV summaries) is one class.
#include <string>

#include "analysis/analysed_trace.h"

namespace perfprof {

class Exporter {
 public:
  virtual ~Exporter() = default;
  // Writes `trace` to `path`. Throws std::runtime_error naming the path when it cannot be
  // written; an existing file is then left untouched.
  virtual void write(const AnalysedTrace& trace, const std::string& path) const = 0;
};

}  // namespace perfprof
