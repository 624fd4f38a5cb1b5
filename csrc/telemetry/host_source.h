#pragma once
// The host's counters from Linux /proc: CPU usage per core and of the profiled process, memory,
// disk and network throughput. Each file is opened once and re-read in place at every sample, so
// a sample costs a few reads of kernel-generated text and no allocation once warm.
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "telemetry/telemetry_source.h"

namespace perfprof {

// Which groups of counters a HostSource reads (none by default).
struct HostGroups {
  bool cpu = false;      // HostCpuUsage per core and "all" (<root>/stat), ProcessCpuUsage (<root>/<pid>/stat; this process's CPU clock in /proc)
  bool mem = false;      // HostMemoryUsed/Available (<root>/meminfo), ProcessMemoryRss (<root>/<pid>/statm)
  bool disk = false;     // DiskRead/DiskWrite per block device (<root>/diskstats)
  bool network = false;  // NetworkReceive/Transmit per interface (<root>/<pid>/net/dev)
};

// The share of CPUs a process used over an interval (1.0: one CPU), at most the CPUs it may run
// on. A process's CPU clock adds a thread running on another CPU late (at that CPU's scheduler
// tick), so an interval can hold CPU time of the one before: what is over the cap is carried into
// the next interval, and the shares still add up to the clock.
class CpuShare {
 public:
  explicit CpuShare(double cpus) : cpus_(cpus) {}
  // The share of `cpu_ns` CPU time, plus what earlier intervals carried, over `wall_ns`.
  double over(double cpu_ns, double wall_ns) noexcept;
  // Nothing carried (the clock was not read at the previous sample).
  void reset() noexcept { carried_ns_ = 0; }

 private:
  double cpus_;
  double carried_ns_ = 0;
};

class HostSource : public TelemetrySource {
 public:
  // Reads `groups` under `proc_root` (a fake tree in tests) for process `pid`. Opens nothing
  // yet: the first sample() opens the files and reports those it cannot read.
  explicit HostSource(HostGroups groups, std::string proc_root = "/proc", pid_t pid = getpid());
  ~HostSource() override;
  HostSource(const HostSource&) = delete;
  HostSource& operator=(const HostSource&) = delete;

  std::string name() const override;
  std::string sample(int64_t now_ns, std::vector<Reading>& out) noexcept override;

  class GroupReader;  // one group's files and the counters of its previous sample (host_source.cpp)

 private:
  HostGroups groups_;
  std::vector<std::unique_ptr<GroupReader>> readers_;
  uint64_t samples_ = 0;     // sample() calls so far
  int64_t previous_ns_ = 0;  // now_ns of the previous call
};

}  // namespace perfprof
