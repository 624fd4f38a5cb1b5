#include "telemetry/nvml_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <new>
#include <utility>

#include "common/library_symbols.h"

namespace perfprof {
namespace {

// The driver installs the versioned soname; the unversioned name comes only with development files.
constexpr const char* kSoname = "libnvidia-ml.so.1";

}  // namespace

const NvmlLibrary& NvmlLibrary::load(const std::string& explicit_path) {
  static std::mutex mutex;
  // Never freed: the libraries stay loaded for the process lifetime.
  static auto* loaded = new std::map<std::string, std::unique_ptr<NvmlLibrary>>();
  const std::string location = explicit_path.empty() ? kSoname : explicit_path;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<NvmlLibrary>& library = (*loaded)[location];
  if (!library) library.reset(new NvmlLibrary(location));
  return *library;
}

NvmlLibrary::NvmlLibrary(const std::string& location) {
  status_.library = location;
  // RTLD_LOCAL: NVML's symbols stay out of the global namespace (a torch in the process may load
  // its own copy through its own path).
  void* handle = dlopen(location.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    status_.reason = fmt::format("{} not found: {}", location, error ? error : "cannot be loaded");
    return;
  }
  std::string missing;
  if (!bind(handle, missing)) {
    api_ = NvmlApi();
    status_.reason = fmt::format("{} is not a usable libnvidia-ml (no {})", location, missing);
    dlclose(handle);
    return;
  }
  status_.available = true;
}

bool NvmlLibrary::bind(void* handle, std::string& missing) {
  NvmlApi& a = api_;
  const std::pair<const char*, bool> required[] = {
      {"nvmlInit_v2", resolve_symbol(handle, "nvmlInit_v2", &a.Init)},
      {"nvmlShutdown", resolve_symbol(handle, "nvmlShutdown", &a.Shutdown)},
      {"nvmlErrorString", resolve_symbol(handle, "nvmlErrorString", &a.ErrorString)},
      {"nvmlDeviceGetCount_v2", resolve_symbol(handle, "nvmlDeviceGetCount_v2", &a.DeviceGetCount)},
      {"nvmlDeviceGetHandleByIndex_v2", resolve_symbol(handle, "nvmlDeviceGetHandleByIndex_v2", &a.DeviceGetHandleByIndex)},
  };
  for (const auto& [name, found] : required) {
    if (!found) {
      missing = name;
      return false;
    }
  }
  resolve_symbol(handle, "nvmlDeviceGetUtilizationRates", &a.DeviceGetUtilizationRates);
  resolve_symbol(handle, "nvmlDeviceGetMemoryInfo", &a.DeviceGetMemoryInfo);
  resolve_symbol(handle, "nvmlDeviceGetPowerUsage", &a.DeviceGetPowerUsage);
  resolve_symbol(handle, "nvmlDeviceGetClockInfo", &a.DeviceGetClockInfo);
  // Deprecated by the NVML 13 headers for nvmlDeviceGetTemperatureV, but exported by current
  // drivers and the only form older ones have.
  resolve_symbol(handle, "nvmlDeviceGetTemperature", &a.DeviceGetTemperature);
  resolve_symbol(handle, "nvmlDeviceGetPcieThroughput", &a.DeviceGetPcieThroughput);
  resolve_symbol(handle, "nvmlDeviceGetNvLinkState", &a.DeviceGetNvLinkState);
  resolve_symbol(handle, "nvmlDeviceGetFieldValues", &a.DeviceGetFieldValues);
  return true;
}

std::string NvmlLibrary::describe(nvmlReturn_t result) const {
  const char* text = api_.ErrorString ? api_.ErrorString(result) : nullptr;
  if (text && *text) return fmt::format("{} ({})", text, static_cast<int>(result));
  return fmt::format("NVML error {}", static_cast<int>(result));
}

std::unique_ptr<NvmlSession> NvmlSession::open(const std::string& explicit_path, NvmlStatus& status) {
  try {
    const NvmlLibrary& library = NvmlLibrary::load(explicit_path);
    status = library.status();
    if (!status.available) return nullptr;
    const NvmlApi& api = library.api();
    if (const nvmlReturn_t result = api.Init(); result != NVML_SUCCESS) {
      status.available = false;
      status.reason = fmt::format("nvmlInit failed: {}", library.describe(result));
      return nullptr;
    }
    // From here the session owns the initialisation: its destructor shuts NVML down. Allocated
    // without throwing, so that no initialisation is left behind without its owner.
    std::unique_ptr<NvmlSession> session(new (std::nothrow) NvmlSession(library, 0));
    if (!session) {
      api.Shutdown();
      throw std::bad_alloc();
    }
    unsigned count = 0;
    if (const nvmlReturn_t result = api.DeviceGetCount(&count); result != NVML_SUCCESS) {
      status.available = false;
      status.reason = fmt::format("no GPU: nvmlDeviceGetCount failed: {}", library.describe(result));
      return nullptr;
    }
    if (count == 0) {
      status.available = false;
      status.reason = "no GPU";
      return nullptr;
    }
    session->devices_ = count;
    status.devices = count;
    return session;
  } catch (...) {  // std::bad_alloc: a short text, held without allocating
    status.available = false;
    status.reason = "out of memory";
    return nullptr;
  }
}

NvmlSession::~NvmlSession() { library_.api().Shutdown(); }

NvmlStatus probe_nvml(const std::string& explicit_path) {
  NvmlStatus status;
  NvmlSession::open(explicit_path, status);
  return status;
}

}  // namespace perfprof
