#include "analysis/analysed_trace.h"

#include <utility>

namespace perfprof {

AnalysedTrace::AnalysedTrace(TraceModel model)
    : model_(std::make_shared<const TraceModel>(std::move(model))),
      tree_(std::make_shared<const OpTree>(build_op_tree(*model_))),
      gpu_metrics_(std::make_shared<const GpuMetrics>(perfprof::gpu_metrics(*model_))) {}

const memory::MemoryProfile& AnalysedTrace::memory_profile() const {
  std::call_once(memory_->once, [&] { memory_->profile = memory::categorize(model_->memory.events); });
  return *memory_->profile;
}

memory::MemoryTimeline AnalysedTrace::memory_timeline(memory::Device device) const {
  return memory::build_timeline(memory_profile(), model_->memory.events, device, model_->unix_offset_ns);
}

}  // namespace perfprof
