#pragma once
// libcupti, loaded at run time: perfprof is never linked against it, so `import perfprof` works
// on machines without CUDA, and the same wheel works with any CUPTI 12.x/13.x.
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace perfprof {

// The optional entry points of per-kernel metric collection (range_profiler.h,
// kernel_metrics_collector.h): the Range Profiler API, the Profiler Host API that builds its
// configuration and evaluates its counters, the target calls they need and the ids of a
// context. Each one's type comes from the header's declaration; X(Name) stands for cuptiName.
// All of them or none are usable: an older libcupti lacks them and still loads for activity
// collection.
#define PERFPROF_CUPTI_PROFILER_ENTRY_POINTS(X) \
  X(GetContextId)                              \
  X(GetDeviceId)                               \
  X(ProfilerInitialize)                        \
  X(ProfilerDeInitialize)                      \
  X(DeviceGetChipName)                         \
  X(ProfilerGetCounterAvailability)            \
  X(ProfilerHostInitialize)                    \
  X(ProfilerHostDeinitialize)                  \
  X(ProfilerHostGetBaseMetrics)                \
  X(ProfilerHostConfigAddMetrics)              \
  X(ProfilerHostGetConfigImageSize)            \
  X(ProfilerHostGetConfigImage)                \
  X(ProfilerHostGetNumOfPasses)                \
  X(ProfilerHostEvaluateToGpuValues)           \
  X(RangeProfilerEnable)                       \
  X(RangeProfilerDisable)                      \
  X(RangeProfilerGetCounterDataSize)           \
  X(RangeProfilerCounterDataImageInitialize)   \
  X(RangeProfilerSetConfig)                    \
  X(RangeProfilerStart)                        \
  X(RangeProfilerStop)                         \
  X(RangeProfilerDecodeData)                   \
  X(RangeProfilerGetCounterDataInfo)

// The CUPTI entry points perfprof uses. Required ones are non-null once loaded; optional ones
// (newer CUPTI) may be null.
struct CuptiApi {
  CUptiResult (*GetVersion)(uint32_t*) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t*) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  // Optional.
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc) = nullptr;
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
  CUptiResult (*ActivityGetStructSize)(CUpti_ActivityKind, uint32_t, size_t*) = nullptr;
  CUptiResult (*ActivityEnableLaunchAttributes)(uint8_t) = nullptr;
  CUptiResult (*ActivityEnableAndDump)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*GetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t*) = nullptr;
  // Optional, per-kernel metrics (PERFPROF_CUPTI_PROFILER_ENTRY_POINTS).
#define PERFPROF_CUPTI_API_MEMBER(name) decltype(&::cupti##name) name = nullptr;
  PERFPROF_CUPTI_PROFILER_ENTRY_POINTS(PERFPROF_CUPTI_API_MEMBER)
#undef PERFPROF_CUPTI_API_MEMBER
};

// The first per-kernel metric entry point `api` lacks ("cuptiRangeProfilerEnable"), or nullptr
// when it has them all.
const char* missing_profiler_entry_point(const CuptiApi& api);

// "CUPTI_ERROR_X (code)" for messages, also when CUPTI cannot name the code.
std::string describe_cupti_result(const CuptiApi& api, CUptiResult result);

// The CUDA driver calls perfprof makes besides probing it (per-kernel metrics only): which
// context the calling thread uses, and waiting for its work. Null when the driver lacks them.
struct CudaDriverApi {
  CUresult (*CtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
};

struct CuptiStatus {
  bool available = false;
  std::string library;            // path of the loaded library
  uint32_t version = 0;           // cuptiGetVersion
  int devices = 0;                // CUDA devices the driver reports
  std::string reason;             // why not available
  std::vector<std::string> tried;  // every location tried, with its outcome
};

class CuptiLibrary {
 public:
  static CuptiLibrary& instance();

  // Loads libcupti once. `explicit_path` (PERFPROF_CUPTI_LIBRARY) is the only place tried when
  // set; otherwise an already loaded libcupti is reused, then `candidates` are tried in order.
  // CUPTI loads and even answers cuptiGetVersion on machines without a GPU, so availability
  // also needs the CUDA driver (`driver_library`, default libcuda.so.1) to report a device.
  const CuptiStatus& load(const std::string& explicit_path, const std::vector<std::string>& candidates,
                          const std::string& driver_library);

  bool available() const { return status_.available; }
  const CuptiStatus& status() const { return status_; }
  const CuptiApi& api() const { return api_; }
  const CudaDriverApi& driver() const { return driver_; }

  // "CUPTI_ERROR_X (code)" for messages, also when CUPTI cannot name the code.
  std::string describe(CUptiResult result) const;

 private:
  CuptiLibrary() = default;
  bool try_open(const std::string& location, int flags);
  void probe_driver(const std::string& driver_library);
  bool bind(void* handle, std::string* missing);

  std::mutex mutex_;
  bool attempted_ = false;
  CuptiStatus status_;
  CuptiApi api_;
  CudaDriverApi driver_;
};

}  // namespace perfprof
