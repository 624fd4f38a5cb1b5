#pragma once
// The sampler thread: reads its telemetry sources at a fixed interval and records each reading
// as a counter sample on its own recorder buffer (thread "perfprof sampler"), so samples reach
// the capture, the window and the budget like every other event.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/telemetry_source.h"

namespace perfprof {

struct SamplerReport {
  uint64_t samples = 0;               // rounds of reading every source
  uint64_t readings = 0;              // counter samples recorded
  uint64_t late_samples = 0;          // rounds skipped because a round overran its slot
  int64_t cpu_ns = 0;                 // CPU time the sampler thread used
  int64_t wall_ns = 0;                // from start to stop
  std::vector<std::string> messages;  // each source's first failure: "<source>: <why>"
};

class Sampler {
 public:
  // Samples `sources` every `interval_ns` (> 0) from start() to stop().
  Sampler(std::vector<std::unique_ptr<TelemetrySource>> sources, int64_t interval_ns);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Starts the thread, which samples at once (the baseline of the rates), then on the interval's
  // grid. Returns "" or why the thread could not be started.
  std::string start() noexcept;
  // Takes a last sample, so the final partial interval is measured, and joins the thread: returns
  // within one source read of the call, not one interval.
  SamplerReport stop() noexcept;

 private:
  void run() noexcept;
  void sample_all(int64_t now, std::vector<Reading>& readings) noexcept;

  std::vector<std::unique_ptr<TelemetrySource>> sources_;
  std::vector<bool> source_reported_;  // a source's first failure is reported, later ones counted
  const int64_t interval_ns_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
  SamplerReport report_;  // written by the thread, read after join
};

}  // namespace perfprof
