#pragma once
// What a counter sample measures. A user's counter (mstx/record_counter) is User; the samplers
// (csrc/telemetry) give each of theirs a metric, so exports group, title and tabulate samples by
// what they are rather than by a name's spelling. The sample's name is its instance: "cpu3",
// "nvme0n1", "eth0", "GPU 0", "GPU 0 NVLink 2", "process".
#include <cstdint>
#include <string_view>

namespace perfprof {

// The numbers are part of the capture format (docs/formats/capture.md): only ever added.
enum class CounterMetric : uint8_t {
  User = 0,
  HostCpuUsage = 1,          // % of one CPU (instance "cpuN") or of all of them ("all"), 0-100
  ProcessCpuUsage = 2,       // % of one CPU used by the profiled process (instance "process"), 0-100·CPUs
  HostMemoryUsed = 3,        // bytes: MemTotal - MemAvailable
  HostMemoryAvailable = 4,   // bytes: MemAvailable
  ProcessMemoryRss = 5,      // bytes: the profiled process's resident set
  DiskRead = 6,              // bytes/s read from a block device
  DiskWrite = 7,             // bytes/s written to a block device
  NetworkReceive = 8,        // bytes/s received on an interface
  NetworkTransmit = 9,       // bytes/s sent on an interface
  GpuUtilization = 10,       // % of the sample period a kernel ran (NVML)
  GpuMemoryUtilization = 11, // % of the sample period device memory was read or written (NVML)
  GpuMemoryUsed = 12,        // bytes of device memory in use (NVML)
  GpuPower = 13,             // watts drawn (NVML)
  GpuSmClock = 14,           // MHz (NVML)
  GpuTemperature = 15,       // degrees Celsius (NVML)
  PcieReceive = 16,          // bytes/s over PCIe into the GPU (NVML)
  PcieTransmit = 17,         // bytes/s over PCIe out of the GPU (NVML)
  NvlinkReceive = 18,        // bytes/s received on one NVLink (NVML)
  NvlinkTransmit = 19,       // bytes/s sent on one NVLink (NVML)
};

inline constexpr uint8_t kLastCounterMetric = static_cast<uint8_t>(CounterMetric::NvlinkTransmit);

// How exports present a metric: `title` is the Chrome trace counter's name (instances are its
// series), `unit` what a value counts.
struct CounterMetricInfo {
  std::string_view title;
  std::string_view unit;
};

// The metric's title and unit; User gives empty strings (a user's counter is named by its name).
CounterMetricInfo counter_metric_info(CounterMetric metric);

// `value` as a metric when it names one (0..kLastCounterMetric), else false.
bool is_counter_metric(uint8_t value);

}  // namespace perfprof
