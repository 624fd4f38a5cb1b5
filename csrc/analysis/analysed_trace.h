#pragma once
// A built trace model with what analysis derives from it once: the operator tree every exporter
// and summary walks, the GPU activities' metrics, and (on first use, since only memory exports
// need it) the memory profile.
// Shared, immutable after construction: exporters may run on other threads.
#include <memory>
#include <mutex>
#include <optional>

#include "analysis/gpu_metrics.h"
#include "analysis/op_tree.h"
#include "memory/categorizer.h"
#include "memory/timeline.h"
#include "trace/trace_model.h"

namespace perfprof {

class AnalysedTrace {
 public:
  explicit AnalysedTrace(TraceModel model);

  const TraceModel& model() const { return *model_; }
  const OpTree& tree() const { return *tree_; }
  const GpuMetrics& gpu_metrics() const { return *gpu_metrics_; }
  // Each byte's category (memory/categorizer.h), computed on first use.
  const memory::MemoryProfile& memory_profile() const;
  // The bytes per category over time on `device`.
  memory::MemoryTimeline memory_timeline(memory::Device device) const;

 private:
  struct LazyMemoryProfile {
    std::once_flag once;
    std::optional<memory::MemoryProfile> profile;
  };
  std::shared_ptr<const TraceModel> model_;
  std::shared_ptr<const OpTree> tree_;
  std::shared_ptr<const GpuMetrics> gpu_metrics_;
  std::shared_ptr<LazyMemoryProfile> memory_ = std::make_shared<LazyMemoryProfile>();
};

}  // namespace perfprof
