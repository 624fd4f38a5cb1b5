#pragma once
// A source of system or device counters read by the sampler thread (sampler.h): the host's /proc
// files, NVML. A source reads, the sampler records: sources know nothing of the recorder.
#include <cstdint>
#include <string>
#include <vector>

#include "common/string_table.h"
#include "record/counter_metric.h"

namespace perfprof {

// One counter's value at a sample. `instance` is an id of global_strings() (the source interns
// each instance's name once, when it first sees it).
struct Reading {
  CounterMetric metric = CounterMetric::User;
  StringId instance = kEmptyString;
  double value = 0;
};

class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;

  // What the source is, for messages: "host cpu", "NVML".
  virtual std::string name() const = 0;

  // Reads the counters at `now_ns` (monotonic, now_ns()) and appends one Reading per counter to
  // `out`. Rates (bytes/s, CPU %) are over the time since the previous call; the first call after
  // construction gives levels only (memory, clocks...), no rates. Returns "" on success, else why
  // a read failed (what could be read is still appended); never throws.
  virtual std::string sample(int64_t now_ns, std::vector<Reading>& out) = 0;
};

}  // namespace perfprof
