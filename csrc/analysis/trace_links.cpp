#include "analysis/trace_links.h"

#include <unordered_set>

#include "analysis/op_tree.h"

namespace perfprof {
namespace {

// A GPU activity a CUDA API call's ac2g flow can end at: any device work but an mstx range's.
bool launched(const GpuActivity& activity) {
  return activity.kind != GpuActivityKind::UserAnnotation && activity.correlation != 0;
}

}  // namespace

std::vector<uint32_t> number_python_frames(const TraceModel& model) {
  std::vector<uint32_t> ids(model.ranges.size(), 0);
  uint32_t next = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (is_python_frame(model, i)) ids[i] = ++next;
  }
  return ids;
}

uint64_t range_external_id(const TraceModel& model, size_t row) {
  const RangeTable& r = model.ranges;
  if (!model.gpu.collected) return 0;
  return r.correlation[row] != 0 ? r.external_id[row] : r.id[row];
}

std::vector<FlowEnd> range_flow_ends(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::vector<FlowEnd> ends(r.size());
  for (size_t link = 0; link < model.forward_backward.size(); ++link) {
    const ForwardBackwardLink& l = model.forward_backward[link];
    ends[l.forward] = {forward_backward_flow_id(link), kForwardBackwardFlow, true};
    ends[l.backward] = {forward_backward_flow_id(link), kForwardBackwardFlow, false};
  }
  std::unordered_set<uint32_t> launching;
  for (const GpuActivity& activity : model.gpu.activities) {
    if (launched(activity)) launching.insert(activity.correlation);
  }
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.correlation[i] != 0 && launching.count(r.correlation[i]) != 0) ends[i] = {r.correlation[i], kCpuToGpuFlow, true};
  }
  return ends;
}

std::vector<FlowEnd> activity_flow_ends(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::unordered_set<uint32_t> calls;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.correlation[i] != 0) calls.insert(r.correlation[i]);
  }
  std::vector<FlowEnd> ends(model.gpu.activities.size());
  for (size_t a = 0; a < ends.size(); ++a) {
    const GpuActivity& activity = model.gpu.activities[a];
    if (launched(activity) && calls.count(activity.correlation) != 0) ends[a] = {activity.correlation, kCpuToGpuFlow, false};
  }
  return ends;
}

std::string_view gpu_category(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::Kernel: return "kernel";
    case GpuActivityKind::Memcpy: return "gpu_memcpy";
    case GpuActivityKind::Memset: return "gpu_memset";
    case GpuActivityKind::Synchronization: return "cuda_sync";
    case GpuActivityKind::MemoryAlloc:
    case GpuActivityKind::MemoryFree: return "gpu_memory";
    case GpuActivityKind::GraphLaunch: return "cuda_graph";
    case GpuActivityKind::UserAnnotation: return "gpu_user_annotation";
  }
  return "gpu";
}

}  // namespace perfprof
