// libperfprof_fake_nvml: a test double of libnvidia-ml for machines without an NVIDIA driver.
//
// It implements, from the public nvml.h, the NVML entry points perfprof's GPU telemetry calls,
// answering with the values the control API (fake_nvml_control.h) set. All state sits behind one
// mutex: a sampler thread reads while the test writes.

// The NVML entry points are the library's interface: default visibility, like the control
// functions; everything else is hidden (CXX_VISIBILITY_PRESET).
#pragma GCC visibility push(default)
#include <nvml.h>
#pragma GCC visibility pop

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "fake_nvml_control.h"

// nvml.h leaves the handle's type incomplete: the double's handle is its device's number.
struct nvmlDevice_st {
  unsigned int index;
};

namespace fake_nvml {
namespace {

constexpr unsigned long long kMemoryTotal = 80ull << 30;

struct DeviceValues {
  unsigned int utilization_gpu = 0;
  unsigned int utilization_memory = 0;
  unsigned long long memory_used = 0;
  unsigned int power_mw = 0;
  unsigned int sm_clock_mhz = 0;
  unsigned int temperature_c = 0;
  unsigned int pcie_rx_kb_per_s = 0;
  unsigned int pcie_tx_kb_per_s = 0;
};

struct Link {
  bool active = false;
  unsigned long long rx_kib = 0;
  unsigned long long tx_kib = 0;
};

struct Device {
  DeviceValues values;
  bool has_pcie_counters = false;  // PCIe traffic was added: the byte-counter fields answer
  unsigned long long pcie_rx_bytes = 0;
  unsigned long long pcie_tx_bytes = 0;
  bool has_nvlink = false;  // some link was marked, active or not
  std::array<Link, NVML_NVLINK_MAX_LINKS> links;
};

// Everything fake_nvml_reset forgets.
struct Settings {
  unsigned int device_count = 1;
  std::array<Device, FAKE_NVML_MAX_DEVICES> devices;
  std::map<std::string, nvmlReturn_t, std::less<>> failures;  // "name" or "name:device"
};

using Handles = std::array<nvmlDevice_st, FAKE_NVML_MAX_DEVICES>;

Handles numbered_handles() {
  Handles handles{};
  for (unsigned int i = 0; i < handles.size(); ++i) handles[i].index = i;
  return handles;
}

std::mutex g_mutex;
Settings g_settings;
int g_init_count = 0;  // the client's, kept by reset
std::atomic<unsigned int> g_query_delay_us{0};  // added to every device query; reset by fake_nvml_reset
Handles g_handles = numbered_handles();

using Lock = std::lock_guard<std::mutex>;

// The failure injected for `function` (on `device`, when it names one), if any. Lock held.
nvmlReturn_t injected(const char* function, const nvmlDevice_st* device) {
  const auto& failures = g_settings.failures;
  if (device) {
    const auto found = failures.find(std::string(function) + ":" + std::to_string(device->index));
    if (found != failures.end()) return found->second;
  }
  const auto found = failures.find(function);
  return found == failures.end() ? NVML_SUCCESS : found->second;
}

// The device `handle` names, or null for a handle the double did not give out (or a device
// beyond the current count). Lock held.
Device* device_of(nvmlDevice_t handle) {
  for (unsigned int i = 0; i < g_settings.device_count; ++i) {
    if (handle == &g_handles[i]) return &g_settings.devices[i];
  }
  return nullptr;
}

// A device query: checks what NVML checks, then `answer(device)` fills the outputs.
template <typename Answer>
nvmlReturn_t query(const char* function, nvmlDevice_t handle, bool outputs_valid, Answer answer) {
  // A slow driver (NVML's PCIe throughput waits out a 20 ms window): outside the lock, so the
  // controls stay quick.
  if (const unsigned int delay = g_query_delay_us.load()) std::this_thread::sleep_for(std::chrono::microseconds(delay));
  Lock lock(g_mutex);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  Device* device = device_of(handle);
  if (!device || !outputs_valid) return NVML_ERROR_INVALID_ARGUMENT;
  if (const nvmlReturn_t failure = injected(function, handle); failure != NVML_SUCCESS) return failure;
  return answer(*device);
}

// Control calls change one device (or one of its links), and ignore numbers out of range.
template <typename Change>
void change_device(unsigned int device, Change change) {
  if (device >= FAKE_NVML_MAX_DEVICES) return;
  Lock lock(g_mutex);
  change(g_settings.devices[device]);
}

// A throughput field's value: one link's counter, or (scopeId UINT_MAX) their sum.
nvmlReturn_t throughput(const Device& device, nvmlFieldValue_t& field) {
  const bool receive = field.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
  auto counter = [&](const Link& link) { return receive ? link.rx_kib : link.tx_kib; };
  unsigned long long kib = 0;
  if (field.scopeId == UINT_MAX) {
    for (const Link& link : device.links) kib += counter(link);
  } else if (field.scopeId < NVML_NVLINK_MAX_LINKS) {
    kib = counter(device.links[field.scopeId]);
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  field.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
  field.value.ullVal = kib;
  return NVML_SUCCESS;
}

}  // namespace
}  // namespace fake_nvml

using namespace fake_nvml;

extern "C" {

// --- NVML entry points -----------------------------------------------------------------------

nvmlReturn_t nvmlInit_v2(void) {
  Lock lock(g_mutex);
  if (const nvmlReturn_t failure = injected("nvmlInit_v2", nullptr); failure != NVML_SUCCESS) return failure;
  ++g_init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  Lock lock(g_mutex);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (const nvmlReturn_t failure = injected("nvmlShutdown", nullptr); failure != NVML_SUCCESS) return failure;
  --g_init_count;
  return NVML_SUCCESS;
}

// The double's own wording for the codes tests use.
const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  Lock lock(g_mutex);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
  if (const nvmlReturn_t failure = injected("nvmlDeviceGetCount_v2", nullptr); failure != NVML_SUCCESS) {
    return failure;
  }
  *deviceCount = g_settings.device_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  Lock lock(g_mutex);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= g_settings.device_count) return NVML_ERROR_INVALID_ARGUMENT;
  if (const nvmlReturn_t failure = injected("nvmlDeviceGetHandleByIndex_v2", &g_handles[index]);
      failure != NVML_SUCCESS) {
    return failure;
  }
  *device = &g_handles[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return query("nvmlDeviceGetUtilizationRates", device, utilization != nullptr, [&](const Device& d) {
    utilization->gpu = d.values.utilization_gpu;
    utilization->memory = d.values.utilization_memory;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return query("nvmlDeviceGetMemoryInfo", device, memory != nullptr, [&](const Device& d) {
    memory->used = d.values.memory_used;
    memory->total = std::max(kMemoryTotal, memory->used);
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return query("nvmlDeviceGetPowerUsage", device, power != nullptr, [&](const Device& d) {
    *power = d.values.power_mw;
    return NVML_SUCCESS;
  });
}

// Only the SM clock is modelled: the other domains answer NOT_SUPPORTED.
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  return query("nvmlDeviceGetClockInfo", device, clock != nullptr, [&](const Device& d) {
    if (type != NVML_CLOCK_SM) return NVML_ERROR_NOT_SUPPORTED;
    *clock = d.values.sm_clock_mhz;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int* temp) {
  return query("nvmlDeviceGetTemperature", device, temp != nullptr && sensorType == NVML_TEMPERATURE_GPU,
               [&](const Device& d) {
                 *temp = d.values.temperature_c;
                 return NVML_SUCCESS;
               });
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                         unsigned int* value) {
  const bool valid_counter = counter == NVML_PCIE_UTIL_RX_BYTES || counter == NVML_PCIE_UTIL_TX_BYTES;
  return query("nvmlDeviceGetPcieThroughput", device, value != nullptr && valid_counter, [&](const Device& d) {
    *value = counter == NVML_PCIE_UTIL_RX_BYTES ? d.values.pcie_rx_kb_per_s : d.values.pcie_tx_kb_per_s;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive) {
  return query("nvmlDeviceGetNvLinkState", device, isActive != nullptr && link < NVML_NVLINK_MAX_LINKS,
               [&](const Device& d) {
                 if (!d.has_nvlink) return NVML_ERROR_NOT_SUPPORTED;
                 *isActive = d.links[link].active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
                 return NVML_SUCCESS;
               });
}

// Each value gets its own return code, as NVML gives them: throughput fields of an NVLink
// device succeed, every other field is NOT_SUPPORTED.
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values) {
  return query("nvmlDeviceGetFieldValues", device, values != nullptr && valuesCount >= 0, [&](const Device& d) {
    for (int i = 0; i < valuesCount; ++i) {
      nvmlFieldValue_t& field = values[i];
      const bool is_throughput = field.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX ||
                                 field.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
      const bool is_pcie = field.fieldId == NVML_FI_DEV_PCIE_COUNT_RX_BYTES ||
                           field.fieldId == NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
      if (d.has_nvlink && is_throughput) {
        field.nvmlReturn = throughput(d, field);
      } else if (d.has_pcie_counters && is_pcie) {
        field.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
        field.value.ullVal = field.fieldId == NVML_FI_DEV_PCIE_COUNT_RX_BYTES ? d.pcie_rx_bytes : d.pcie_tx_bytes;
        field.nvmlReturn = NVML_SUCCESS;
      } else {
        field.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      }
    }
    return NVML_SUCCESS;
  });
}

// --- Control API (fake_nvml_control.h) -------------------------------------------------------

void fake_nvml_reset(void) {
  Lock lock(g_mutex);
  g_settings = Settings();
  g_query_delay_us = 0;
}

void fake_nvml_set_device_count(unsigned int count) {
  if (count > FAKE_NVML_MAX_DEVICES) return;
  Lock lock(g_mutex);
  g_settings.device_count = count;
}

void fake_nvml_set_device(unsigned int device, unsigned int utilization_gpu,
                          unsigned int utilization_memory, unsigned long long memory_used_bytes,
                          unsigned int power_mw, unsigned int sm_clock_mhz,
                          unsigned int temperature_c, unsigned int pcie_rx_kb_per_s,
                          unsigned int pcie_tx_kb_per_s) {
  change_device(device, [&](Device& d) {
    d.values = {utilization_gpu, utilization_memory, memory_used_bytes, power_mw,
                sm_clock_mhz,    temperature_c,      pcie_rx_kb_per_s,  pcie_tx_kb_per_s};
  });
}

void fake_nvml_set_link_active(unsigned int device, unsigned int link, int active) {
  if (link >= NVML_NVLINK_MAX_LINKS) return;
  change_device(device, [&](Device& d) {
    d.has_nvlink = true;
    d.links[link].active = active != 0;
  });
}

void fake_nvml_add_link_traffic(unsigned int device, unsigned int link, unsigned long long rx_kib,
                                unsigned long long tx_kib) {
  if (link >= NVML_NVLINK_MAX_LINKS) return;
  change_device(device, [&](Device& d) {
    d.links[link].rx_kib += rx_kib;
    d.links[link].tx_kib += tx_kib;
  });
}

void fake_nvml_set_query_delay_us(unsigned int microseconds) { g_query_delay_us = microseconds; }

void fake_nvml_add_pcie_traffic(unsigned int device, unsigned long long rx_bytes, unsigned long long tx_bytes) {
  change_device(device, [&](Device& d) {
    d.has_pcie_counters = true;
    d.pcie_rx_bytes += rx_bytes;
    d.pcie_tx_bytes += tx_bytes;
  });
}

void fake_nvml_fail(const char* function_name, int result) {
  if (!function_name) return;
  Lock lock(g_mutex);
  if (result == NVML_SUCCESS) {
    g_settings.failures.erase(function_name);
  } else {
    g_settings.failures[function_name] = static_cast<nvmlReturn_t>(result);
  }
}

int fake_nvml_init_count(void) {
  Lock lock(g_mutex);
  return g_init_count;
}

}  // extern "C"
