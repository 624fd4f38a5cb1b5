#include "cupti/cupti_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "common/library_symbols.h"

namespace perfprof {
namespace {

// Sonames checked with RTLD_NOLOAD, so a libcupti another library (torch) already loaded is
// shared rather than loaded twice (two copies would fight over one CUDA driver interface).
const char* const kSonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

}  // namespace

CuptiLibrary& CuptiLibrary::instance() {
  static CuptiLibrary* library = new CuptiLibrary();  // never unloaded: CUPTI may call back late
  return *library;
}

const CuptiStatus& CuptiLibrary::load(const std::string& explicit_path,
                                      const std::vector<std::string>& candidates,
                                      const std::string& driver_library) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (attempted_) return status_;
  attempted_ = true;
  bool loaded = false;
  if (!explicit_path.empty()) {
    loaded = try_open(explicit_path, RTLD_NOW | RTLD_LOCAL);
  } else {
    for (const char* soname : kSonames) {
      if ((loaded = try_open(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))) break;
    }
    for (size_t i = 0; !loaded && i < candidates.size(); ++i) {
      loaded = try_open(candidates[i], RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (!loaded) {
    if (!explicit_path.empty()) {
      status_.reason = fmt::format("PERFPROF_CUPTI_LIBRARY: {}", status_.tried.back());
    } else if (status_.reason.empty()) {
      status_.reason = "libcupti was not found (searched the nvidia-cuda-cupti wheel, CUDA_HOME, "
                       "CUDA_PATH and the loader path; cuda_status()['tried'] lists each)";
    }
    return status_;
  }
  probe_driver(driver_library.empty() ? "libcuda.so.1" : driver_library);
  return status_;
}

void CuptiLibrary::probe_driver(const std::string& driver_library) {
  status_.available = false;
  void* driver = dlopen(driver_library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    status_.reason = fmt::format("no NVIDIA driver: {} cannot be loaded", driver_library);
    return;
  }
  int (*init)(unsigned int) = nullptr;
  int (*device_count)(int*) = nullptr;
  if (!resolve_symbol(driver, "cuInit", &init) || !resolve_symbol(driver, "cuDeviceGetCount", &device_count)) {
    status_.reason = fmt::format("{} is not a CUDA driver library", driver_library);
    return;
  }
  resolve_symbol(driver, "cuCtxGetCurrent", &driver_.CtxGetCurrent);
  resolve_symbol(driver, "cuCtxSynchronize", &driver_.CtxSynchronize);
  int count = 0;
  if (const int result = init(0); result != 0) {
    status_.reason = fmt::format("the CUDA driver did not initialise (cuInit returned {})", result);
  } else if (device_count(&count) != 0 || count < 1) {
    status_.reason = "no CUDA device is visible (check CUDA_VISIBLE_DEVICES)";
  } else {
    status_.available = true;
    status_.devices = count;
    status_.reason.clear();
  }
}

bool CuptiLibrary::try_open(const std::string& location, int flags) {
  void* handle = dlopen(location.c_str(), flags);
  if (!handle) {
    if (!(flags & RTLD_NOLOAD)) {
      const char* error = dlerror();
      status_.tried.push_back(fmt::format("{}: {}", location, error ? error : "cannot load"));
    }
    return false;
  }
  std::string missing;
  CuptiApi previous = api_;
  if (!bind(handle, &missing)) {
    api_ = previous;
    status_.tried.push_back(fmt::format("{}: not a usable libcupti (no {})", location, missing));
    status_.reason = status_.tried.back();
    dlclose(handle);
    return false;
  }
  uint32_t version = 0;
  const CUptiResult result = api_.GetVersion(&version);
  if (result != CUPTI_SUCCESS) {
    // Seen without an NVIDIA driver: every call fails with CUPTI_ERROR_UNKNOWN.
    status_.tried.push_back(fmt::format("{}: cuptiGetVersion failed with {}", location, describe(result)));
    status_.reason = fmt::format("{} (is an NVIDIA driver installed and a GPU visible?)", status_.tried.back());
    api_ = previous;
    dlclose(handle);
    return false;
  }
  status_.library = location;
  status_.version = version;
  status_.reason.clear();
  status_.tried.push_back(fmt::format("{}: loaded, CUPTI version {}", location, version));
  return true;
}

bool CuptiLibrary::bind(void* handle, std::string* missing) {
  CuptiApi& a = api_;
  const std::pair<const char*, bool> required[] = {
      {"cuptiGetVersion", resolve_symbol(handle, "cuptiGetVersion", &a.GetVersion)},
      {"cuptiActivityRegisterCallbacks", resolve_symbol(handle, "cuptiActivityRegisterCallbacks", &a.ActivityRegisterCallbacks)},
      {"cuptiActivityEnable", resolve_symbol(handle, "cuptiActivityEnable", &a.ActivityEnable)},
      {"cuptiActivityDisable", resolve_symbol(handle, "cuptiActivityDisable", &a.ActivityDisable)},
      {"cuptiActivityFlushAll", resolve_symbol(handle, "cuptiActivityFlushAll", &a.ActivityFlushAll)},
      {"cuptiActivityGetNextRecord", resolve_symbol(handle, "cuptiActivityGetNextRecord", &a.ActivityGetNextRecord)},
      {"cuptiActivityGetNumDroppedRecords", resolve_symbol(handle, "cuptiActivityGetNumDroppedRecords", &a.ActivityGetNumDroppedRecords)},
      {"cuptiActivityPushExternalCorrelationId", resolve_symbol(handle, "cuptiActivityPushExternalCorrelationId", &a.ActivityPushExternalCorrelationId)},
      {"cuptiActivityPopExternalCorrelationId", resolve_symbol(handle, "cuptiActivityPopExternalCorrelationId", &a.ActivityPopExternalCorrelationId)},
      {"cuptiGetTimestamp", resolve_symbol(handle, "cuptiGetTimestamp", &a.GetTimestamp)},
  };
  for (const auto& [name, found] : required) {
    if (!found) {
      *missing = name;
      return false;
    }
  }
  resolve_symbol(handle, "cuptiGetResultString", &a.GetResultString);
  resolve_symbol(handle, "cuptiGetCallbackName", &a.GetCallbackName);
  resolve_symbol(handle, "cuptiActivityRegisterTimestampCallback", &a.ActivityRegisterTimestampCallback);
  resolve_symbol(handle, "cuptiSetThreadIdType", &a.SetThreadIdType);
  resolve_symbol(handle, "cuptiActivityGetStructSize", &a.ActivityGetStructSize);
  resolve_symbol(handle, "cuptiActivityEnableLaunchAttributes", &a.ActivityEnableLaunchAttributes);
  resolve_symbol(handle, "cuptiActivityEnableAndDump", &a.ActivityEnableAndDump);
  resolve_symbol(handle, "cuptiGetStreamIdEx", &a.GetStreamIdEx);
#define PERFPROF_RESOLVE_OPTIONAL(name) resolve_symbol(handle, "cupti" #name, &a.name);
  PERFPROF_CUPTI_PROFILER_ENTRY_POINTS(PERFPROF_RESOLVE_OPTIONAL)
#undef PERFPROF_RESOLVE_OPTIONAL
  return true;
}

std::string CuptiLibrary::describe(CUptiResult result) const {
  return describe_cupti_result(api_, result);
}

const char* missing_profiler_entry_point(const CuptiApi& api) {
#define PERFPROF_RETURN_IF_MISSING(name) \
  if (!api.name) return "cupti" #name;
  PERFPROF_CUPTI_PROFILER_ENTRY_POINTS(PERFPROF_RETURN_IF_MISSING)
#undef PERFPROF_RETURN_IF_MISSING
  return nullptr;
}

std::string describe_cupti_result(const CuptiApi& api, CUptiResult result) {
  const char* name = nullptr;
  if (api.GetResultString && api.GetResultString(result, &name) == CUPTI_SUCCESS && name) {
    return fmt::format("{} ({})", name, static_cast<int>(result));
  }
  return fmt::format("CUPTI error {}", static_cast<int>(result));
}

}  // namespace perfprof
