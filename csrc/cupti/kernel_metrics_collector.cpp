#include "cupti/kernel_metrics_collector.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "cupti/cupti_library.h"

namespace perfprof {
namespace {

// The calling thread's current CUDA context, or why there is none.
std::pair<CUcontext, std::string> current_context(const CuptiLibrary& library) {
  const CudaDriverApi& driver = library.driver();
  if (!driver.CtxGetCurrent) return {nullptr, "the CUDA driver has no cuCtxGetCurrent"};
  CUcontext context = nullptr;
  if (const CUresult result = driver.CtxGetCurrent(&context); result != CUDA_SUCCESS) {
    return {nullptr, fmt::format("cuCtxGetCurrent failed (CUDA error {})", static_cast<int>(result))};
  }
  if (context == nullptr) {
    return {nullptr, "no CUDA context is current on the thread that steps the profiler (CUDA is not initialised "
                     "yet): kernels are measured from the first window that begins after it is"};
  }
  return {context, ""};
}

// A kernel of the measured context launched inside the window, and its place in launch order.
struct LaunchedKernel {
  uint32_t correlation = 0;
  int64_t start_ns = 0;
  bool operator<(const LaunchedKernel& other) const {
    return correlation != other.correlation ? correlation < other.correlation : start_ns < other.start_ns;
  }
};

// The kernels of context `context_id` whose launching call began in [begin_ns, end_ns], in
// launch order (see the top of the header).
std::vector<LaunchedKernel> kernels_launched_in(const GpuCollected& gpu, uint32_t context_id, int64_t begin_ns,
                                                int64_t end_ns) {
  std::unordered_map<uint32_t, int64_t> call_start;
  for (const ApiCall& call : gpu.api_calls) call_start.emplace(call.correlation, call.start_ns);
  std::vector<LaunchedKernel> kernels;
  for (const GpuActivity& a : gpu.activities) {
    if (a.kind != GpuActivityKind::Kernel || a.context != context_id) continue;
    const auto call = call_start.find(a.correlation);
    if (call != call_start.end() && call->second >= begin_ns && call->second <= end_ns) {
      kernels.push_back({a.correlation, a.start_ns});
    }
  }
  std::sort(kernels.begin(), kernels.end());
  return kernels;
}

}  // namespace

KernelMetricsCollector& KernelMetricsCollector::instance() {
  static KernelMetricsCollector* collector = new KernelMetricsCollector();  // CUPTI outlives statics
  return *collector;
}

void KernelMetricsCollector::configure(const KernelMetricsOptions& options) {
  close();
  options_ = options;
  plan_.reset();
  measured_ = {};
  GpuMetricPlan plan(options.group, options.l2_cache);
  if (!plan.metrics().empty()) plan_ = std::make_unique<GpuMetricPlan>(std::move(plan));
}

std::string KernelMetricsCollector::begin_window() {
  if (!plan_) return "";
  measured_ = {};
  const CuptiLibrary& library = CuptiLibrary::instance();
  if (!library.available()) return fmt::format("CUPTI is not available: {}", library.status().reason);
  const auto [context, why_not] = current_context(library);
  if (context == nullptr) return why_not;
  const CuptiApi& api = library.api();
  uint32_t context_id = 0;
  uint32_t device = 0;
  if (const char* missing = missing_profiler_entry_point(api)) {
    return fmt::format("this libcupti has no {}: per-kernel GPU metrics need a newer CUPTI", missing);
  }
  if (api.GetContextId(context, &context_id) != CUPTI_SUCCESS || api.GetDeviceId(context, &device) != CUPTI_SUCCESS) {
    return "CUPTI cannot name the current CUDA context or its device";
  }
  if (session_ && context_id != context_id_) close();  // the thread moved to another device
  if (!session_) {
    std::string error;
    session_ = KernelMetricsSession::open(context, static_cast<int>(device), plan_->metrics(), options_.max_kernels,
                                          error);
    if (!session_) return error;
    context_id_ = context_id;
  }
  window_begin_ns_ = now_ns();
  if (std::string error = session_->start(); !error.empty()) return error;
  in_window_ = true;
  return "";
}

std::string KernelMetricsCollector::end_window() {
  if (!in_window_) return "";
  in_window_ = false;
  window_end_ns_ = now_ns();
  // CUPTI counts a kernel once it ran: the window's kernels must have finished before its
  // values are read.
  if (const CudaDriverApi& driver = CuptiLibrary::instance().driver(); driver.CtxSynchronize) driver.CtxSynchronize();
  std::string error = session_->stop();
  measured_ = session_->collect();
  if (error.empty()) error = measured_.error;
  return error;
}

KernelMetricsInput KernelMetricsCollector::take(const GpuCollected& gpu) {
  KernelMetricsInput input;
  if (!plan_ || !session_) return input;
  for (const GpuMetricColumn* column : plan_->columns()) input.columns.emplace_back(column->name);
  input.kernels_left_out = measured_.kernels_left_out;
  const std::vector<LaunchedKernel> launched = kernels_launched_in(gpu, context_id_, window_begin_ns_, window_end_ns_);
  const std::vector<KernelMetricValues>& ranges = measured_.kernels;
  if (launched.size() != ranges.size() + measured_.kernels_left_out) {
    input.kernels_unmatched = ranges.size();
  } else {
    for (const KernelMetricValues& range : ranges) {
      if (range.range_index >= launched.size()) {
        ++input.kernels_unmatched;
        continue;
      }
      const LaunchedKernel& kernel = launched[range.range_index];
      input.kernels.push_back({kernel.correlation, kernel.start_ns, plan_->column_values(range.values)});
    }
  }
  close();
  return input;
}

void KernelMetricsCollector::close() {
  if (session_ && in_window_) session_->stop();
  session_.reset();
  in_window_ = false;
  context_id_ = 0;
}

}  // namespace perfprof
