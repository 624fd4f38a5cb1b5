#pragma once
// The process's one telemetry collection: opens the sources a session asks for and runs the
// sampler over them from start() to stop() (python/perfprof/_collectors/telemetry.py).
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <sys/types.h>

#include "telemetry/host_source.h"
#include "telemetry/sampler.h"

namespace perfprof {

struct TelemetryOptions {
  int64_t interval_ns = 20'000'000;
  HostGroups host;           // /proc groups to sample (none: no host source)
  bool gpu = false;          // NVML: utilisation, memory, power, SM clock, temperature per GPU
  bool pcie = false;         // NVML: PCIe receive/transmit per GPU (implies gpu)
  bool nvlink = false;       // NVML: NVLink receive/transmit per active link (implies gpu)
  std::string nvml_library;  // $PERFPROF_NVML_LIBRARY: the only place tried when set
};

class TelemetryCollector {
 public:
  static TelemetryCollector& instance();

  // Opens the sources and starts sampling. Returns one message per source that could not be
  // opened (the others still run); a collection already running is stopped first.
  std::vector<std::string> start(const TelemetryOptions& options) noexcept;
  // Stops sampling (within one source read) and says what it did; an empty report when not
  // running, or in a process forked while sampling (below).
  SamplerReport stop() noexcept;
  bool running() const;

 private:
  TelemetryCollector() = default;
  ~TelemetryCollector();

  mutable std::mutex mutex_;
  std::unique_ptr<Sampler> sampler_;
  pid_t owner_ = 0;  // the process that started the sampler
};

}  // namespace perfprof
