#pragma once
// GPU telemetry through NVML: per GPU its utilisation, memory, power, SM clock and temperature,
// and optionally PCIe and NVLink traffic.
#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "telemetry/nvml_library.h"
#include "telemetry/telemetry_source.h"

namespace perfprof {

struct GpuSourceOptions {
  // PcieReceive/PcieTransmit per GPU: rates of NVML's cumulative PCIe byte counters (Hopper and
  // later drivers' NVML_FI_DEV_PCIE_COUNT_RX/TX_BYTES) between samples; where a GPU lacks them,
  // nvmlDeviceGetPcieThroughput, which NVML measures over a 20 ms window of its own (the call
  // may wait for it).
  bool pcie = false;
  // NvlinkReceive/NvlinkTransmit per link that is active when the source opens.
  bool nvlink = false;
};

// Instances: "GPU N" for a GPU's counters, "GPU N NVLink L" for a link's, where N is NVML's index
// (nvidia-smi's; CUDA's only with CUDA_DEVICE_ORDER=PCI_BUS_ID, and NVML ignores
// CUDA_VISIBLE_DEVICES).
class GpuSource : public TelemetrySource {
 public:
  std::string name() const override { return "NVML"; }
  std::string sample(int64_t now_ns, std::vector<Reading>& out) override;

  // The GPUs sampled.
  size_t devices() const { return devices_.size(); }

 private:
  // A device query. One that answers NVML_ERROR_NOT_SUPPORTED is not asked again (see answered()).
  enum Query : unsigned { kUtilization, kMemory, kPower, kSmClock, kTemperature, kPcieCounters,
                          kPcieReceive, kPcieTransmit, kNvlink, kQueryCount };

  // A cumulative traffic counter (a field value, in `bytes_per_unit` units) as the last sample
  // that read it found it.
  struct TrafficCounter {
    bool supported = true;  // false once its field answered NVML_ERROR_NOT_SUPPORTED
    bool seen = false;
    unsigned long long units = 0;
    int64_t at_ns = 0;

    // Remembers `now_units` read at `now_ns`; true with the bytes/s since the previous read, if any.
    bool advance(unsigned long long now_units, int64_t now_ns, double bytes_per_unit, double& bytes_per_s);
  };
  struct Link {
    unsigned index = 0;
    StringId instance = kEmptyString;
    TrafficCounter receive;
    TrafficCounter transmit;
  };
  struct Device {
    unsigned index = 0;
    nvmlDevice_t handle = nullptr;
    StringId instance = kEmptyString;
    std::bitset<kQueryCount> unsupported;
    std::vector<Link> links;
    std::vector<nvmlFieldValue_t> fields;  // the NVLink counters' request, receive and transmit per link
    TrafficCounter pcie_receive;
    TrafficCounter pcie_transmit;
  };

  GpuSource(std::unique_ptr<NvmlSession> session, const GpuSourceOptions& options)
      : session_(std::move(session)), options_(options) {}
  friend std::unique_ptr<GpuSource> open_gpu_source(const GpuSourceOptions&, const std::string&,
                                                    std::string&);

  void add_device(unsigned index);
  void find_links(Device& device);
  void read_device(Device& device, std::vector<Reading>& out, std::string& error);
  void read_pcie(Device& device, int64_t now_ns, std::vector<Reading>& out, std::string& error);
  bool read_pcie_counters(Device& device, int64_t now_ns, std::vector<Reading>& out, std::string& error);
  void read_links(Device& device, int64_t now_ns, std::vector<Reading>& out, std::string& error);
  // Reads one cumulative counter's field into a rate; false with `why` when the field failed.
  void read_counter(TrafficCounter& counter, const nvmlFieldValue_t& field, int64_t now_ns, double bytes_per_unit,
                    CounterMetric metric, StringId instance, std::vector<Reading>& out, std::string& why) const;
  bool answered(Device& device, Query query, const char* function, nvmlReturn_t result,
                std::string& error) const;

  std::unique_ptr<NvmlSession> session_;  // NVML stays initialised while the source lives
  GpuSourceOptions options_;
  std::vector<Device> devices_;
  std::string pending_;  // a failure while opening, returned by the first sample()
};

// The GPUs of the libnvidia-ml at `library_path` ($PERFPROF_NVML_LIBRARY, or "" for the loader's
// libnvidia-ml.so.1). nullptr when there are none to read, with one message in `error`: the
// library cannot be loaded, nvmlInit failed, or no GPU. Never throws.
std::unique_ptr<GpuSource> open_gpu_source(const GpuSourceOptions& options,
                                           const std::string& library_path, std::string& error);

}  // namespace perfprof
