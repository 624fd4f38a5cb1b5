#include "telemetry/gpu_source.h"

#include <fmt/format.h>

#include <utility>

namespace perfprof {
namespace {

// The unit of nvmlDeviceGetPcieThroughput (KB/s) and of the NVLink counters (KiB).
constexpr double kBytesPerKib = 1024;
constexpr double kBytesPerByte = 1;

// Calls a device query, or answers NOT_SUPPORTED for one this libnvidia-ml lacks (an old driver).
template <typename... Params, typename... Args>
nvmlReturn_t call(nvmlReturn_t (*query)(nvmlDevice_t, Params...), nvmlDevice_t device, Args... args) {
  return query ? query(device, args...) : NVML_ERROR_NOT_SUPPORTED;
}

nvmlFieldValue_t field_request(unsigned field, unsigned link) {
  nvmlFieldValue_t request{};
  request.fieldId = field;
  request.scopeId = link;
  return request;
}

// A cumulative counter's value; false for a type no counter has.
bool counter_value(const nvmlFieldValue_t& field, unsigned long long& value) {
  switch (field.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: value = field.value.ullVal; return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: value = field.value.ulVal; return true;
    case NVML_VALUE_TYPE_UNSIGNED_INT: value = field.value.uiVal; return true;
    default: return false;
  }
}

}  // namespace

std::unique_ptr<GpuSource> open_gpu_source(const GpuSourceOptions& options,
                                           const std::string& library_path, std::string& error) {
  try {
    NvmlStatus status;
    std::unique_ptr<NvmlSession> session = NvmlSession::open(library_path, status);
    if (!session) {
      error = status.reason;
      return nullptr;
    }
    const unsigned count = session->devices();
    std::unique_ptr<GpuSource> source(new GpuSource(std::move(session), options));
    for (unsigned index = 0; index < count; ++index) source->add_device(index);
    if (source->devices_.empty()) {
      error = fmt::format("no GPU: {}", source->pending_);
      return nullptr;
    }
    return source;
  } catch (...) {  // std::bad_alloc: a short text, held without allocating
    error = "out of memory";
    return nullptr;
  }
}

void GpuSource::add_device(unsigned index) {
  const NvmlApi& api = session_->api();
  Device device;
  device.index = index;
  if (const nvmlReturn_t result = api.DeviceGetHandleByIndex(index, &device.handle); result != NVML_SUCCESS) {
    // Without a handle the GPU cannot be read (no permission, fallen off the bus): the others can.
    if (pending_.empty()) {
      pending_ = fmt::format("nvmlDeviceGetHandleByIndex({}): {}", index, session_->library().describe(result));
    }
    return;
  }
  device.instance = global_strings().intern(fmt::format("GPU {}", index));
  if (options_.nvlink) find_links(device);
  devices_.push_back(std::move(device));
}

void GpuSource::find_links(Device& device) {
  const NvmlApi& api = session_->api();
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    const nvmlReturn_t result = call(api.DeviceGetNvLinkState, device.handle, link, &active);
    // A GPU without NVLink answers NOT_SUPPORTED; one with fewer links than NVML's most,
    // INVALID_ARGUMENT for the numbers it lacks.
    if (result == NVML_ERROR_NOT_SUPPORTED) break;
    if (result == NVML_ERROR_INVALID_ARGUMENT) continue;
    if (result != NVML_SUCCESS) {
      if (pending_.empty()) {
        pending_ = fmt::format("nvmlDeviceGetNvLinkState on GPU {} NVLink {}: {}", device.index, link,
                               session_->library().describe(result));
      }
      continue;
    }
    if (active != NVML_FEATURE_ENABLED) continue;
    Link& added = device.links.emplace_back();
    added.index = link;
    added.instance = global_strings().intern(fmt::format("GPU {} NVLink {}", device.index, link));
  }
  device.fields.resize(2 * device.links.size());
}

std::string GpuSource::sample(int64_t now_ns, std::vector<Reading>& out) {
  try {
    std::string error = std::exchange(pending_, std::string());
    for (Device& device : devices_) {
      read_device(device, out, error);
      if (options_.pcie) read_pcie(device, now_ns, out, error);
      if (!device.links.empty()) read_links(device, now_ns, out, error);
    }
    return error;
  } catch (...) {  // std::bad_alloc: a short text, held without allocating
    return "out of memory";
  }
}

void GpuSource::read_device(Device& device, std::vector<Reading>& out, std::string& error) {
  const NvmlApi& api = session_->api();
  auto read = [&](Query query, const char* function, auto entry_point, auto... args) {
    return !device.unsupported.test(query) &&
           answered(device, query, function, call(entry_point, device.handle, args...), error);
  };
  auto add = [&](CounterMetric metric, double value) { out.push_back({metric, device.instance, value}); };

  nvmlUtilization_t utilization{};
  if (read(kUtilization, "nvmlDeviceGetUtilizationRates", api.DeviceGetUtilizationRates, &utilization)) {
    add(CounterMetric::GpuUtilization, utilization.gpu);
    add(CounterMetric::GpuMemoryUtilization, utilization.memory);
  }
  nvmlMemory_t memory{};
  if (read(kMemory, "nvmlDeviceGetMemoryInfo", api.DeviceGetMemoryInfo, &memory)) {
    add(CounterMetric::GpuMemoryUsed, static_cast<double>(memory.used));
  }
  unsigned milliwatts = 0;
  if (read(kPower, "nvmlDeviceGetPowerUsage", api.DeviceGetPowerUsage, &milliwatts)) {
    add(CounterMetric::GpuPower, milliwatts / 1000.0);
  }
  unsigned megahertz = 0;
  if (read(kSmClock, "nvmlDeviceGetClockInfo", api.DeviceGetClockInfo, NVML_CLOCK_SM, &megahertz)) {
    add(CounterMetric::GpuSmClock, megahertz);
  }
  unsigned celsius = 0;
  if (read(kTemperature, "nvmlDeviceGetTemperature", api.DeviceGetTemperature, NVML_TEMPERATURE_GPU,
           &celsius)) {
    add(CounterMetric::GpuTemperature, celsius);
  }
}

void GpuSource::read_pcie(Device& device, int64_t now_ns, std::vector<Reading>& out, std::string& error) {
  // The byte counters cost a field read; the throughput query may wait out NVML's 20 ms window.
  if (read_pcie_counters(device, now_ns, out, error)) return;
  const NvmlApi& api = session_->api();
  auto read = [&](Query query, nvmlPcieUtilCounter_t direction, CounterMetric metric) {
    unsigned kib_per_s = 0;
    if (!device.unsupported.test(query) &&
        answered(device, query, "nvmlDeviceGetPcieThroughput",
                 call(api.DeviceGetPcieThroughput, device.handle, direction, &kib_per_s), error)) {
      out.push_back({metric, device.instance, kib_per_s * kBytesPerKib});
    }
  };
  read(kPcieReceive, NVML_PCIE_UTIL_RX_BYTES, CounterMetric::PcieReceive);
  read(kPcieTransmit, NVML_PCIE_UTIL_TX_BYTES, CounterMetric::PcieTransmit);
}

// False when this GPU has no PCIe byte counters (its answer is then remembered) and the
// throughput query must be used instead.
bool GpuSource::read_pcie_counters(Device& device, int64_t now_ns, std::vector<Reading>& out, std::string& error) {
  if (device.unsupported.test(kPcieCounters)) return false;
  nvmlFieldValue_t fields[2] = {field_request(NVML_FI_DEV_PCIE_COUNT_RX_BYTES, 0),
                                field_request(NVML_FI_DEV_PCIE_COUNT_TX_BYTES, 0)};
  const nvmlReturn_t result = call(session_->api().DeviceGetFieldValues, device.handle, 2, fields);
  if (result == NVML_SUCCESS && (fields[0].nvmlReturn == NVML_ERROR_NOT_SUPPORTED ||
                                 fields[1].nvmlReturn == NVML_ERROR_NOT_SUPPORTED)) {
    device.unsupported.set(kPcieCounters);
    return false;
  }
  if (!answered(device, kPcieCounters, "nvmlDeviceGetFieldValues", result, error)) {
    return !device.unsupported.test(kPcieCounters);  // a passing failure: no reading this time
  }
  std::string why;
  read_counter(device.pcie_receive, fields[0], now_ns, kBytesPerByte, CounterMetric::PcieReceive, device.instance,
               out, why);
  read_counter(device.pcie_transmit, fields[1], now_ns, kBytesPerByte, CounterMetric::PcieTransmit, device.instance,
               out, why);
  if (!why.empty() && error.empty()) error = fmt::format("nvmlDeviceGetFieldValues on GPU {}: {}", device.index, why);
  return true;
}

void GpuSource::read_counter(TrafficCounter& counter, const nvmlFieldValue_t& field, int64_t now_ns,
                             double bytes_per_unit, CounterMetric metric, StringId instance,
                             std::vector<Reading>& out, std::string& why) const {
  if (!counter.supported) return;
  unsigned long long units = 0;
  if (field.nvmlReturn == NVML_ERROR_NOT_SUPPORTED) {
    counter.supported = false;  // as for a query: the counter's lasting answer
  } else if (field.nvmlReturn != NVML_SUCCESS || !counter_value(field, units)) {
    if (why.empty()) {
      why = field.nvmlReturn != NVML_SUCCESS ? session_->library().describe(field.nvmlReturn)
                                             : fmt::format("a value of type {}", static_cast<int>(field.valueType));
      why = fmt::format("field {}: {}", field.fieldId, why);
    }
  } else if (double bytes_per_s = 0; counter.advance(units, now_ns, bytes_per_unit, bytes_per_s)) {
    out.push_back({metric, instance, bytes_per_s});
  }
}

void GpuSource::read_links(Device& device, int64_t now_ns, std::vector<Reading>& out, std::string& error) {
  if (device.unsupported.test(kNvlink)) return;
  // Two fields per link, one call for them all: [2i] receive, [2i + 1] transmit of links[i].
  for (size_t i = 0; i < device.links.size(); ++i) {
    device.fields[2 * i] = field_request(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, device.links[i].index);
    device.fields[2 * i + 1] = field_request(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, device.links[i].index);
  }
  const nvmlReturn_t result = call(session_->api().DeviceGetFieldValues, device.handle,
                                   static_cast<int>(device.fields.size()), device.fields.data());
  if (!answered(device, kNvlink, "nvmlDeviceGetFieldValues", result, error)) return;

  std::string why;
  for (size_t i = 0; i < device.links.size(); ++i) {
    Link& link = device.links[i];
    read_counter(link.receive, device.fields[2 * i], now_ns, kBytesPerKib, CounterMetric::NvlinkReceive, link.instance,
                 out, why);
    read_counter(link.transmit, device.fields[2 * i + 1], now_ns, kBytesPerKib, CounterMetric::NvlinkTransmit,
                 link.instance, out, why);
    if (!why.empty() && error.empty()) {
      error = fmt::format("nvmlDeviceGetFieldValues on GPU {} NVLink {}: {}", device.index, link.index, why);
    }
  }
}

// NVML_ERROR_NOT_SUPPORTED is the device's lasting answer (a board without a power sensor, clocks
// a consumer GPU does not report, no NVLink): asking again every sample would only repeat it, and
// it is no failure worth a message. Any other error may pass (a busy driver) and is reported.
bool GpuSource::answered(Device& device, Query query, const char* function, nvmlReturn_t result,
                         std::string& error) const {
  if (result == NVML_SUCCESS) return true;
  if (result == NVML_ERROR_NOT_SUPPORTED) {
    device.unsupported.set(query);
  } else if (error.empty()) {
    error = fmt::format("{} on GPU {}: {}", function, device.index, session_->library().describe(result));
  }
  return false;
}

bool GpuSource::TrafficCounter::advance(unsigned long long now_units, int64_t now_ns, double bytes_per_unit,
                                        double& bytes_per_s) {
  // A counter that went down was reset (by an administrator, or a driver reload) or wrapped: no
  // rate then.
  const bool rate = seen && now_ns > at_ns && now_units >= units;
  if (rate) {
    bytes_per_s = static_cast<double>(now_units - units) * bytes_per_unit * 1e9 / static_cast<double>(now_ns - at_ns);
  }
  seen = true;
  units = now_units;
  at_ns = now_ns;
  return rate;
}

}  // namespace perfprof
