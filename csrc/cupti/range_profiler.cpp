#include "cupti/range_profiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

namespace perfprof {
namespace {

// Each params struct goes with its structSize: CUPTI reads only the fields that size covers, so
// an older libcupti accepts a struct from newer headers as long as the size stops at fields it
// knows. Sizes below end at the last field perfprof sets or reads.
template <typename Params>
Params params(size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}
#define PERFPROF_PARAMS(Type) params<Type>(Type##_STRUCT_SIZE)

std::string failure(const CuptiApi& api, const char* call, CUptiResult result) {
  std::string message = fmt::format("{} failed: {}", call, describe_cupti_result(api, result));
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    message += " (the driver lets only administrators read GPU performance counters: see "
               "NVreg_RestrictProfilingToAdminUsers)";
  }
  return message;
}

// cuptiProfilerInitialize for every user in the process: CUPTI's headers do not say whether it
// counts nested calls, so perfprof counts them and de-initialises with the last user.
class ProfilerInterface {
 public:
  static std::unique_ptr<ProfilerInterface> acquire(const CuptiApi& api, std::string& error) {
    std::lock_guard<std::mutex> lock(mutex());
    if (users() == 0) {
      auto p = PERFPROF_PARAMS(CUpti_Profiler_Initialize_Params);
      if (const CUptiResult result = api.ProfilerInitialize(&p); result != CUPTI_SUCCESS) {
        error = failure(api, "cuptiProfilerInitialize", result);
        return nullptr;
      }
    }
    ++users();
    return std::unique_ptr<ProfilerInterface>(new ProfilerInterface(api));
  }
  ~ProfilerInterface() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--users() > 0) return;
    auto p = PERFPROF_PARAMS(CUpti_Profiler_DeInitialize_Params);
    api_.ProfilerDeInitialize(&p);
  }
  ProfilerInterface(const ProfilerInterface&) = delete;
  ProfilerInterface& operator=(const ProfilerInterface&) = delete;

 private:
  explicit ProfilerInterface(const CuptiApi& api) : api_(api) {}
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static size_t& users() {
    static size_t count = 0;
    return count;
  }

  CuptiApi api_;
};

// A Profiler Host object: what a chip has, and the configuration and evaluation of its metrics.
class HostObject {
 public:
  // `availability`: the context's counter availability image, or empty to ask about the chip.
  static std::unique_ptr<HostObject> create(const CuptiApi& api, const std::string& chip,
                                            const std::vector<uint8_t>& availability,
                                            std::string& error) {
    // pSinglePassMetricSetName, the last field, is for PM sampling: the size stops before it.
    auto p = params<CUpti_Profiler_Host_Initialize_Params>(
        CUPTI_PROFILER_STRUCT_SIZE(CUpti_Profiler_Host_Initialize_Params, pHostObject));
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    if (const CUptiResult result = api.ProfilerHostInitialize(&p); result != CUPTI_SUCCESS) {
      error = failure(api, "cuptiProfilerHostInitialize", result);
      return nullptr;
    }
    return std::unique_ptr<HostObject>(new HostObject(api, p.pHostObject));
  }
  ~HostObject() {
    auto p = PERFPROF_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = object_;
    api_.ProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUpti_Profiler_Host_Object* get() const { return object_; }

  // The chip's base metrics of every type (counter, ratio, throughput) into `out`.
  std::string base_metrics(std::set<std::string, std::less<>>& out) const {
    for (const CUpti_MetricType type :
         {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
      auto p = PERFPROF_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
      p.pHostObject = object_;
      p.metricType = type;
      if (const CUptiResult result = api_.ProfilerHostGetBaseMetrics(&p); result != CUPTI_SUCCESS) {
        return failure(api_, "cuptiProfilerHostGetBaseMetrics", result);
      }
      for (size_t i = 0; i < p.numMetrics && p.ppMetricNames; ++i) {
        if (p.ppMetricNames[i]) out.emplace(p.ppMetricNames[i]);
      }
    }
    return {};
  }

 private:
  HostObject(const CuptiApi& api, CUpti_Profiler_Host_Object* object) : api_(api), object_(object) {}

  CuptiApi api_;
  CUpti_Profiler_Host_Object* object_;
};

// The range profiler enabled on a context.
class RangeProfiler {
 public:
  static std::unique_ptr<RangeProfiler> enable(const CuptiApi& api, CUcontext context, std::string& error) {
    // cacheControlMode (CUDA 13.4), the last field, is left out: zero, its default, means none.
    auto p = params<CUpti_RangeProfiler_Enable_Params>(
        CUPTI_PROFILER_STRUCT_SIZE(CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject));
    p.ctx = context;
    if (const CUptiResult result = api.RangeProfilerEnable(&p); result != CUPTI_SUCCESS) {
      error = failure(api, "cuptiRangeProfilerEnable", result);
      return nullptr;
    }
    return std::unique_ptr<RangeProfiler>(new RangeProfiler(api, p.pRangeProfilerObject));
  }
  ~RangeProfiler() {
    auto p = PERFPROF_PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = object_;
    api_.RangeProfilerDisable(&p);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  RangeProfiler(const CuptiApi& api, CUpti_RangeProfiler_Object* object) : api_(api), object_(object) {}

  CuptiApi api_;
  CUpti_RangeProfiler_Object* object_;
};

// maxNumRangeTreeNodes, which must hold them all, is 32 bits wide.
constexpr size_t kMaxKernels = std::numeric_limits<uint32_t>::max();

std::string without_range_profiler(const char* missing) {
  return fmt::format("this libcupti has no Range Profiler API ({} is missing): per-kernel GPU "
                     "metrics need a newer CUPTI",
                     missing);
}

std::string cupti_unavailable() {
  return fmt::format("CUPTI is not available: {}", CuptiLibrary::instance().status().reason);
}

std::string read_chip_name(const CuptiApi& api, int device, std::string& chip) {
  auto p = PERFPROF_PARAMS(CUpti_Device_GetChipName_Params);
  p.deviceIndex = static_cast<size_t>(device);
  if (const CUptiResult result = api.DeviceGetChipName(&p); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiDeviceGetChipName", result);
  }
  chip = p.pChipName ? p.pChipName : "";
  return {};
}

// Whether the chip has the base metric of every metric of `columns`.
bool has_all(const std::set<std::string, std::less<>>& base_metrics,
             const std::vector<GpuMetricColumn>& columns) {
  return std::all_of(columns.begin(), columns.end(), [&](const GpuMetricColumn& column) {
    return std::all_of(column.terms.begin(), column.terms.end(), [&](const GpuMetricTerm& term) {
      return base_metrics.count(base_metric(term.metric)) > 0;
    });
  });
}

}  // namespace

// Everything a session holds, released in reverse order of acquisition.
struct KernelMetricsSession::Impl {
  enum class State { Ready, Started, Stopped, Collected };

  Impl(const CuptiApi& cupti, CUcontext ctx, std::vector<std::string> names, size_t max)
      : api(cupti), context(ctx), metrics(std::move(names)), max_kernels(max) {
    for (const std::string& name : metrics) metric_names.push_back(name.c_str());
  }
  ~Impl() {
    try {
      stop();
    } catch (...) {  // only formatting its message can throw; the window ends regardless
    }
  }

  std::string open(int device);
  std::string check_metrics(int device) const;
  std::string read_counter_availability();
  std::string build_config();
  std::string create_counter_data();
  std::string start();
  std::string stop();
  void collect();
  void decode();
  std::string evaluate(size_t range, std::vector<double>& values);

  CuptiApi api;
  CUcontext context;
  std::vector<std::string> metrics;
  std::vector<const char*> metric_names;  // metrics' texts, as CUPTI takes them
  size_t max_kernels;

  std::unique_ptr<ProfilerInterface> profiler;
  std::string chip;
  std::vector<uint8_t> counter_availability;
  std::unique_ptr<HostObject> host;
  std::vector<uint8_t> config;
  size_t passes = 0;
  std::unique_ptr<RangeProfiler> range_profiler;
  std::vector<uint8_t> counter_data;

  State state = State::Ready;
  KernelMetrics collected;
};

std::string KernelMetricsSession::Impl::open(int device) {
  std::string error;
  if (!(profiler = ProfilerInterface::acquire(api, error))) return error;
  if (!(error = read_chip_name(api, device, chip)).empty()) return error;
  if (!(error = read_counter_availability()).empty()) return error;
  if (!(host = HostObject::create(api, chip, counter_availability, error))) return error;
  if (!(error = check_metrics(device)).empty()) return error;
  if (!(error = build_config()).empty()) return error;
  if (!(range_profiler = RangeProfiler::enable(api, context, error))) return error;
  return create_counter_data();
}

// Names every metric whose base metric the chip lacks, rather than CUPTI's one error for all.
std::string KernelMetricsSession::Impl::check_metrics(int device) const {
  std::set<std::string, std::less<>> base_metrics;
  if (std::string error = host->base_metrics(base_metrics); !error.empty()) return error;
  std::vector<std::string> unsupported;
  for (const std::string& metric : metrics) {
    if (!base_metrics.count(base_metric(metric))) unsupported.push_back(metric);
  }
  if (unsupported.empty()) return {};
  return fmt::format("the {} GPU (device {}) does not support {}", chip, device,
                     fmt::join(unsupported, ", "));
}

// Device-level counters are allowed: DRAM and L2 metrics are among them. They count all the
// work on the GPU while a kernel runs, other processes' included.
std::string KernelMetricsSession::Impl::read_counter_availability() {
  auto p = PERFPROF_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  p.ctx = context;
  p.bAllowDeviceLevelCounters = 1;
  if (const CUptiResult result = api.ProfilerGetCounterAvailability(&p); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiProfilerGetCounterAvailability", result);
  }
  counter_availability.resize(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = counter_availability.data();
  if (const CUptiResult result = api.ProfilerGetCounterAvailability(&p); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiProfilerGetCounterAvailability", result);
  }
  counter_availability.resize(p.counterAvailabilityImageSize);  // the bytes CUPTI wrote
  return {};
}

std::string KernelMetricsSession::Impl::build_config() {
  auto add = PERFPROF_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host->get();
  add.ppMetricNames = metric_names.data();
  add.numMetrics = metric_names.size();
  if (const CUptiResult result = api.ProfilerHostConfigAddMetrics(&add); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiProfilerHostConfigAddMetrics", result) +
           fmt::format(" for {}", fmt::join(metrics, ", "));
  }
  auto size = PERFPROF_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = host->get();
  if (const CUptiResult result = api.ProfilerHostGetConfigImageSize(&size); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiProfilerHostGetConfigImageSize", result);
  }
  config.resize(size.configImageSize);
  auto image = PERFPROF_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  image.pHostObject = host->get();
  image.configImageSize = config.size();
  image.pConfigImage = config.data();
  if (const CUptiResult result = api.ProfilerHostGetConfigImage(&image); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiProfilerHostGetConfigImage", result);
  }
  auto count = PERFPROF_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  count.configImageSize = config.size();
  count.pConfigImage = config.data();
  if (const CUptiResult result = api.ProfilerHostGetNumOfPasses(&count); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiProfilerHostGetNumOfPasses", result);
  }
  passes = count.numOfPasses;
  return {};
}

// Room for max_kernels ranges, one nesting level each (auto ranges do not nest).
std::string KernelMetricsSession::Impl::create_counter_data() {
  auto p = PERFPROF_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  p.pRangeProfilerObject = range_profiler->get();
  p.pMetricNames = metric_names.data();
  p.numMetrics = metric_names.size();
  p.maxNumOfRanges = max_kernels;
  p.maxNumRangeTreeNodes = static_cast<uint32_t>(max_kernels);
  if (const CUptiResult result = api.RangeProfilerGetCounterDataSize(&p); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiRangeProfilerGetCounterDataSize", result);
  }
  counter_data.resize(p.counterDataSize);
  return {};
}

// The counter data image is initialised at every start, so each window begins empty. One pass
// needs no replay at all (user replay with nothing to replay); more passes are replayed by
// CUPTI around each kernel.
std::string KernelMetricsSession::Impl::start() {
  if (state == State::Started) return {};
  collected = KernelMetrics{};
  auto init = PERFPROF_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = range_profiler->get();
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  if (const CUptiResult result = api.RangeProfilerCounterDataImageInitialize(&init);
      result != CUPTI_SUCCESS) {
    return failure(api, "cuptiRangeProfilerCounterDataImageInitialize", result);
  }
  auto config_params = PERFPROF_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  config_params.pRangeProfilerObject = range_profiler->get();
  config_params.configSize = config.size();
  config_params.pConfig = config.data();
  config_params.counterDataImageSize = counter_data.size();
  config_params.pCounterDataImage = counter_data.data();
  config_params.range = CUPTI_AutoRange;
  config_params.replayMode = passes > 1 ? CUPTI_KernelReplay : CUPTI_UserReplay;
  config_params.maxRangesPerPass = max_kernels;
  config_params.numNestingLevels = 1;
  config_params.minNestingLevel = 1;
  config_params.passIndex = 0;
  config_params.targetNestingLevel = 1;
  if (const CUptiResult result = api.RangeProfilerSetConfig(&config_params); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiRangeProfilerSetConfig", result);
  }
  auto start_params = PERFPROF_PARAMS(CUpti_RangeProfiler_Start_Params);
  start_params.pRangeProfilerObject = range_profiler->get();
  if (const CUptiResult result = api.RangeProfilerStart(&start_params); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiRangeProfilerStart", result);
  }
  state = State::Started;
  return {};
}

std::string KernelMetricsSession::Impl::stop() {
  if (state != State::Started) return {};
  state = State::Stopped;
  auto p = PERFPROF_PARAMS(CUpti_RangeProfiler_Stop_Params);
  p.pRangeProfilerObject = range_profiler->get();
  if (const CUptiResult result = api.RangeProfilerStop(&p); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiRangeProfilerStop", result);
  }
  // Kernel replay runs every pass inside each launch and one pass needs no replay, so a window
  // always ends with every pass submitted; anything else would leave ranges half measured.
  if (!p.isAllPassSubmitted) {
    return fmt::format("cuptiRangeProfilerStop reports passes left to run (pass {} of {})",
                       p.passIndex, passes);
  }
  return {};
}

void KernelMetricsSession::Impl::collect() {
  if (state == State::Started) {
    if (std::string error = stop(); !error.empty()) {
      collected.error = std::move(error);  // nothing to decode: CUPTI refused to end the window
      state = State::Collected;
      return;
    }
  }
  if (state == State::Stopped) decode();
}

void KernelMetricsSession::Impl::decode() {
  state = State::Collected;
  auto p = PERFPROF_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  p.pRangeProfilerObject = range_profiler->get();
  if (const CUptiResult result = api.RangeProfilerDecodeData(&p); result != CUPTI_SUCCESS) {
    collected.error = failure(api, "cuptiRangeProfilerDecodeData", result);
    return;
  }
  collected.kernels_left_out = p.numOfRangeDropped;
  auto info = PERFPROF_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  if (const CUptiResult result = api.RangeProfilerGetCounterDataInfo(&info); result != CUPTI_SUCCESS) {
    collected.error = failure(api, "cuptiRangeProfilerGetCounterDataInfo", result);
    return;
  }
  for (size_t range = 0; range < info.numTotalRanges; ++range) {
    KernelMetricValues kernel{static_cast<uint32_t>(range), std::vector<double>(metrics.size())};
    if (std::string error = evaluate(range, kernel.values); !error.empty()) {
      collected.error = fmt::format("{} (kernel {} of {}; the {} after it are not evaluated)", error,
                                    range, info.numTotalRanges, info.numTotalRanges - range - 1);
      return;
    }
    collected.kernels.push_back(std::move(kernel));
  }
}

std::string KernelMetricsSession::Impl::evaluate(size_t range, std::vector<double>& values) {
  auto p = PERFPROF_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  p.pHostObject = host->get();
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range;
  p.ppMetricNames = metric_names.data();
  p.numMetrics = metric_names.size();
  p.pMetricValues = values.data();
  if (const CUptiResult result = api.ProfilerHostEvaluateToGpuValues(&p); result != CUPTI_SUCCESS) {
    return failure(api, "cuptiProfilerHostEvaluateToGpuValues", result);
  }
  return {};
}

KernelMetricsSession::KernelMetricsSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KernelMetricsSession::~KernelMetricsSession() = default;

std::unique_ptr<KernelMetricsSession> KernelMetricsSession::open(CUcontext context, int device,
                                                                 const std::vector<std::string>& metrics,
                                                                 size_t max_kernels, std::string& error) {
  const CuptiLibrary& library = CuptiLibrary::instance();
  if (!library.available()) {
    error = cupti_unavailable();
    return nullptr;
  }
  return open_with(library.api(), context, device, metrics, max_kernels, error);
}

std::unique_ptr<KernelMetricsSession> KernelMetricsSession::open_with(
    const CuptiApi& api, CUcontext context, int device, const std::vector<std::string>& metrics,
    size_t max_kernels, std::string& error) {
  error.clear();
  try {
    if (const char* missing = missing_profiler_entry_point(api)) {
      error = without_range_profiler(missing);
    } else if (metrics.empty() || max_kernels == 0 || max_kernels > kMaxKernels) {
      error = fmt::format("GPU metrics need at least one metric and 1 to {} kernels", kMaxKernels);
    } else {
      auto impl = std::make_unique<Impl>(api, context, metrics, max_kernels);
      error = impl->open(device);
      if (error.empty()) {
        return std::unique_ptr<KernelMetricsSession>(new KernelMetricsSession(std::move(impl)));
      }
    }
  } catch (const std::exception& e) {
    error = fmt::format("GPU metrics could not be prepared: {}", e.what());
  }
  return nullptr;
}

std::string KernelMetricsSession::start() {
  try {
    return impl_->start();
  } catch (const std::exception& e) {
    return fmt::format("GPU metrics could not start: {}", e.what());
  }
}

std::string KernelMetricsSession::stop() {
  try {
    return impl_->stop();
  } catch (const std::exception& e) {
    return fmt::format("GPU metrics could not stop: {}", e.what());
  }
}

const KernelMetrics& KernelMetricsSession::collect() {
  try {
    impl_->collect();
  } catch (const std::exception& e) {
    impl_->collected.error = fmt::format("GPU metrics could not be decoded: {}", e.what());
  }
  return impl_->collected;
}

const std::vector<std::string>& KernelMetricsSession::metrics() const { return impl_->metrics; }
const std::string& KernelMetricsSession::chip() const { return impl_->chip; }
size_t KernelMetricsSession::passes() const { return impl_->passes; }

std::vector<GpuMetricGroup> supported_metric_groups(int device, std::string& error) {
  error.clear();
  std::vector<GpuMetricGroup> supported;
  try {
    const CuptiLibrary& library = CuptiLibrary::instance();
    const CuptiApi& api = library.api();
    if (!library.available()) {
      error = cupti_unavailable();
      return {};
    }
    if (const char* missing = missing_profiler_entry_point(api)) {
      error = without_range_profiler(missing);
      return {};
    }
    const auto profiler = ProfilerInterface::acquire(api, error);
    if (!profiler) return {};
    std::string chip;
    if (!(error = read_chip_name(api, device, chip)).empty()) return {};
    const auto host = HostObject::create(api, chip, {}, error);
    if (!host) return {};
    std::set<std::string, std::less<>> base_metrics;
    if (!(error = host->base_metrics(base_metrics)).empty()) return {};
    for (const GpuMetricGroup group : kGpuMetricGroups) {
      if (group != GpuMetricGroup::None && has_all(base_metrics, gpu_metric_columns(group))) {
        supported.push_back(group);
      }
    }
  } catch (const std::exception& e) {
    error = fmt::format("GPU metric support could not be read: {}", e.what());
    supported.clear();
  }
  return supported;
}

#undef PERFPROF_PARAMS

}  // namespace perfprof
