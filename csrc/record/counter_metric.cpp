#include "record/counter_metric.h"

namespace perfprof {

CounterMetricInfo counter_metric_info(CounterMetric metric) {
  switch (metric) {
    case CounterMetric::User: return {"", ""};
    case CounterMetric::HostCpuUsage: return {"CPU Usage", "%"};
    case CounterMetric::ProcessCpuUsage: return {"Process CPU Usage", "%"};
    case CounterMetric::HostMemoryUsed: return {"Memory Used", "bytes"};
    case CounterMetric::HostMemoryAvailable: return {"Memory Available", "bytes"};
    case CounterMetric::ProcessMemoryRss: return {"Process RSS", "bytes"};
    case CounterMetric::DiskRead: return {"Disk Read", "bytes/s"};
    case CounterMetric::DiskWrite: return {"Disk Write", "bytes/s"};
    case CounterMetric::NetworkReceive: return {"Network Receive", "bytes/s"};
    case CounterMetric::NetworkTransmit: return {"Network Transmit", "bytes/s"};
    case CounterMetric::GpuUtilization: return {"GPU Utilization", "%"};
    case CounterMetric::GpuMemoryUtilization: return {"GPU Memory Utilization", "%"};
    case CounterMetric::GpuMemoryUsed: return {"GPU Memory Used", "bytes"};
    case CounterMetric::GpuPower: return {"GPU Power", "W"};
    case CounterMetric::GpuSmClock: return {"GPU SM Clock", "MHz"};
    case CounterMetric::GpuTemperature: return {"GPU Temperature", "C"};
    case CounterMetric::PcieReceive: return {"PCIe Receive", "bytes/s"};
    case CounterMetric::PcieTransmit: return {"PCIe Transmit", "bytes/s"};
    case CounterMetric::NvlinkReceive: return {"NVLink Receive", "bytes/s"};
    case CounterMetric::NvlinkTransmit: return {"NVLink Transmit", "bytes/s"};
  }
  return {"", ""};
}

bool is_counter_metric(uint8_t value) { return value <= kLastCounterMetric; }

}  // namespace perfprof
