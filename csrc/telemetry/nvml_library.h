#pragma once
// libnvidia-ml (NVML), loaded at run time like libcupti: perfprof is never linked against it, so
// `import perfprof` works on machines without an NVIDIA driver.
#include <nvml.h>

#include <memory>
#include <string>

namespace perfprof {

// The NVML entry points perfprof uses. The session ones (init, shutdown, error strings, devices)
// are non-null once loaded; a device query this libnvidia-ml lacks (an old driver) is null, and
// its callers treat it as NVML_ERROR_NOT_SUPPORTED.
struct NvmlApi {
  nvmlReturn_t (*Init)() = nullptr;  // nvmlInit_v2
  nvmlReturn_t (*Shutdown)() = nullptr;
  const char* (*ErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*DeviceGetCount)(unsigned int*) = nullptr;                       // _v2
  nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned int, nvmlDevice_t*) = nullptr;  // _v2
  // Device queries (optional).
  nvmlReturn_t (*DeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*DeviceGetPowerUsage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetClockInfo)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetTemperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetPcieThroughput)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetNvLinkState)(nvmlDevice_t, unsigned int, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*DeviceGetFieldValues)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
};

struct NvmlStatus {
  bool available = false;
  std::string library;  // the location loaded, or tried
  unsigned devices = 0;  // GPUs NVML reports (probe_nvml only)
  std::string reason;   // why not available
};

class NvmlLibrary {
 public:
  // libnvidia-ml from `explicit_path` ($PERFPROF_NVML_LIBRARY), the only place tried when
  // non-empty, else "libnvidia-ml.so.1" from the loader path. Each location is loaded once per
  // process, on its first request, and never unloaded (a sampler may still be calling into it);
  // a failed load is not retried. Thread-safe; throws only std::bad_alloc.
  static const NvmlLibrary& load(const std::string& explicit_path);

  // available: loaded with every session entry point; the reason names the location otherwise.
  const NvmlStatus& status() const { return status_; }
  const NvmlApi& api() const { return api_; }

  // "<NVML's text> (<code>)" for messages, also for a code NVML cannot name.
  std::string describe(nvmlReturn_t result) const;

  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

 private:
  explicit NvmlLibrary(const std::string& location);
  bool bind(void* handle, std::string& missing);

  NvmlStatus status_;
  NvmlApi api_;
};

// NVML initialised for as long as the object lives: nvmlInit_v2 when opened, nvmlShutdown when
// destroyed. NVML counts its initialisations, so sessions may overlap (two sources, a probe).
class NvmlSession {
 public:
  // A session of the library at `explicit_path` (see NvmlLibrary::load) with at least one GPU;
  // else nullptr, and `status.reason` says why: "<location> not found: <dlerror>",
  // "nvmlInit failed: <NVML's error>", "no GPU". Never throws.
  static std::unique_ptr<NvmlSession> open(const std::string& explicit_path, NvmlStatus& status);
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  const NvmlLibrary& library() const { return library_; }
  const NvmlApi& api() const { return library_.api(); }
  unsigned devices() const { return devices_; }

 private:
  NvmlSession(const NvmlLibrary& library, unsigned devices) : library_(library), devices_(devices) {}

  const NvmlLibrary& library_;
  unsigned devices_;
};

// Whether GPU telemetry can be read here: opens a session and closes it again. Never throws.
NvmlStatus probe_nvml(const std::string& explicit_path);

}  // namespace perfprof
