#pragma once
// Per-kernel hardware metrics of a profiling session (ExperimentalConfig.gpu_metrics, l2_cache):
// a KernelMetricsSession on the CUDA context the training thread uses, started when the kept
// window begins and read when it ends, its values given to the kernels' activity records.
//
// Joining ranges to kernels: CUPTI numbers a window's auto ranges in launch order on the
// context, and launch order is the order of the launching calls' correlation ids. The kernels
// measured are those of the context whose launching call (its API record) began inside the
// window; sorted by correlation id, then start (a CUDA graph's kernels share their launch's id),
// the i-th is range i. When their number differs from what CUPTI measured (a kernel launched
// from another thread exactly as the window began or ended, an activity record lost), no
// kernel gets values: a wrong pairing would put one kernel's numbers on another. The measured
// kernels are then counted as unmatched instead.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cupti/gpu_metric_sets.h"
#include "cupti/range_profiler.h"
#include "record/gpu_records.h"

namespace perfprof {

struct KernelMetricsOptions {
  GpuMetricGroup group = GpuMetricGroup::None;
  bool l2_cache = false;
  // Kernels measured per window at most: CUPTI's counter data image holds this many ranges.
  // Later kernels are counted in kernels_left_out.
  size_t max_kernels = 16384;
};

// One per process (CUPTI allows one range profiler per context). Driven by the thread that
// steps the profiler; no call throws; every failure is returned as one message.
class KernelMetricsCollector {
 public:
  static KernelMetricsCollector& instance();

  // What the next windows measure. An option set asking for nothing (group None, no L2) turns
  // measuring off. Ends any session measuring something else.
  void configure(const KernelMetricsOptions& options);
  bool configured() const { return plan_ != nullptr; }

  // The kept window begins: kernels launched on the calling thread's current CUDA context from
  // now on are measured. "" or why not (no current context, CUPTI refusing: the message says).
  std::string begin_window();
  // The window ends: waits for the context's work, stops measuring and reads the values.
  // "" or why CUPTI could not give them (the kernels then have none).
  std::string end_window();
  // The last window's values given to the kernels of `gpu`'s records (see the top of this file),
  // and the session released; empty when nothing was measured.
  KernelMetricsInput take(const GpuCollected& gpu);

  // Kernels CUPTI did not measure in the last window ended (past max_kernels).
  uint64_t kernels_left_out() const { return measured_.kernels_left_out; }

 private:
  KernelMetricsCollector() = default;
  void close();

  KernelMetricsOptions options_;
  std::unique_ptr<GpuMetricPlan> plan_;
  std::unique_ptr<KernelMetricsSession> session_;
  uint32_t context_id_ = 0;   // CUPTI's id of the measured context, as activity records give it
  int64_t window_begin_ns_ = 0;
  int64_t window_end_ns_ = 0;
  bool in_window_ = false;
  KernelMetrics measured_;    // the last window's, read by end_window
};

}  // namespace perfprof
