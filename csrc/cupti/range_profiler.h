#pragma once
// Per-kernel GPU metrics through CUPTI's Range Profiler API (cupti_range_profiler.h), with the
// Profiler Host API (cupti_profiler_host.h) building its configuration and evaluating what it
// counted. Written from those headers' documentation and tested on the CUPTI test double only:
// docs/gpu_metrics.md lists what a GPU session must still check.
//
// Auto ranges: CUPTI makes one range per kernel launched on the context while started, numbered
// in launch order (its documentation: an auto range's name is that number, never the kernel's
// name). The caller joins range_index with the context's kernel activity records in launch
// order to name them.
//
// Cost: CUPTI serialises the context's kernels while started (no two overlap). Metrics that
// need more than one pass use kernel replay: CUPTI runs each kernel once per pass, restoring
// the device memory it changed in between, so a kernel takes several times as long (how much
// is not measured yet). Timings taken while metrics are collected are perturbed accordingly.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cupti/cupti_library.h"
#include "cupti/gpu_metric_sets.h"

namespace perfprof {

struct KernelMetricValues {
  uint32_t range_index = 0;    // the kernel's place in launch order on the context since start()
  std::vector<double> values;  // parallel to the session's metrics()
};

struct KernelMetrics {
  std::vector<KernelMetricValues> kernels;  // in launch order
  // Launched while started but past max_kernels: not measured, counted (CUPTI's dropped ranges).
  uint64_t kernels_left_out = 0;
  std::string error;  // why decoding or evaluating stopped early ("" when it did not)
};

// One CUDA context's per-kernel metrics, from open to destruction (which stops, disables the
// range profiler and releases everything CUPTI gave). No call throws; every failure is one
// message naming the CUPTI call and CUPTI's error. Use it from one thread at a time.
class KernelMetricsSession {
 public:
  // Prepares collection of `metrics` (Nsight Compute names, e.g. GpuMetricPlan::metrics()) for
  // at most `max_kernels` kernels per start/stop window on `context`, a context of CUDA device
  // `device`. nullptr with `error` set when CUPTI or its Range Profiler API is missing, the
  // device's chip lacks a metric (named), or CUPTI refuses (its error named).
  static std::unique_ptr<KernelMetricsSession> open(CUcontext context, int device,
                                                    const std::vector<std::string>& metrics,
                                                    size_t max_kernels, std::string& error);
  // The same through the given entry points, without checking that CUPTI is available (tests:
  // a libcupti lacking some of them).
  static std::unique_ptr<KernelMetricsSession> open_with(const CuptiApi& api, CUcontext context,
                                                         int device,
                                                         const std::vector<std::string>& metrics,
                                                         size_t max_kernels, std::string& error);
  ~KernelMetricsSession();
  KernelMetricsSession(const KernelMetricsSession&) = delete;
  KernelMetricsSession& operator=(const KernelMetricsSession&) = delete;

  // Kernels launched on the context from now on are measured. A start after collect() begins
  // a new window; a start while started does nothing. "" or why not.
  std::string start();
  // Ends the window; does nothing unless started. "" or why CUPTI refused.
  std::string stop();
  // Stops if started, then decodes and evaluates the window's kernels once; later calls, until
  // the next start(), return the same. Empty before the first start().
  const KernelMetrics& collect();

  const std::vector<std::string>& metrics() const;
  const std::string& chip() const;  // CUPTI's chip name, e.g. "GH100"
  // Passes CUPTI needs for the metrics; above 1, kernels are replayed (see the top of this file).
  size_t passes() const;

 private:
  struct Impl;
  explicit KernelMetricsSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The groups (never None) whose every metric's base metric the chip of CUDA device `device`
// has, as cuptiProfilerHostGetBaseMetrics lists them. Empty with `error` set when that cannot
// be asked. A session may still be refused a listed group's metrics: the chip's list does not
// know what the context's counters allow (see KernelMetricsSession::open).
std::vector<GpuMetricGroup> supported_metric_groups(int device, std::string& error);

}  // namespace perfprof
