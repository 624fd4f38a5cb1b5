#pragma once
// What GPU collection (CUPTI) records: device activities, the CUDA API calls that launched
// them, and the devices themselves. Decoded off the hot path, one row per activity.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/string_table.h"

namespace perfprof {

enum class GpuActivityKind : uint8_t {
  Kernel,
  Memcpy,
  Memset,
  Synchronization,
  MemoryAlloc,
  MemoryFree,
  GraphLaunch,
  UserAnnotation,  // an mstx range given a stream: spans the GPU work launched inside it
};

struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::Kernel;
  int64_t start_ns = 0;  // host clock (now_ns)
  int64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint32_t correlation = 0;  // links to the ApiCall that caused it
  StringId name = kEmptyString;
  // Kernel
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint16_t registers_per_thread = 0;
  int32_t static_shared_memory = 0;
  uint32_t dynamic_shared_memory = 0;
  // Memcpy, Memset, MemoryAlloc/Free
  uint64_t bytes = 0;
  uint64_t address = 0;
  uint8_t copy_kind = 0;
  uint32_t value = 0;
  uint32_t graph_id = 0;
};

// Track of a GPU activity in the trace: its stream, except host-side synchronisation waits,
// which overlap the kernels they wait for and so get a track of their own per device.
inline constexpr uint32_t kSynchronizationTrack = 0x7fffffff;
inline uint32_t track_of(const GpuActivity& activity) {
  return activity.kind == GpuActivityKind::Synchronization ? kSynchronizationTrack : activity.stream;
}

// CUpti_ActivityMemoryKind values, named.
inline const char* memory_kind_label(uint8_t kind) {
  switch (kind) {
    case 1: return "Pageable";
    case 2: return "Pinned";
    case 3: return "Device";
    case 4: return "Array";
    case 5: return "Managed";
    case 6: return "Device Static";
    case 7: return "Managed Static";
    default: return "Unknown";
  }
}

struct ApiCall {
  bool driver = false;  // driver API, else runtime API
  uint32_t cbid = 0;
  StringId name = kEmptyString;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t os_tid = 0;
  uint32_t correlation = 0;
};

struct GpuDevice {
  uint32_t id = 0;
  std::string name;
  uint32_t sm_count = 0;
  uint64_t global_memory_bytes = 0;
  uint64_t memory_bandwidth_kbps = 0;
  uint32_t compute_major = 0;
  uint32_t compute_minor = 0;
  uint32_t warp_size = 0;
  uint32_t max_threads_per_block = 0;
  uint32_t max_registers_per_block = 0;
  uint32_t max_registers_per_sm = 0;
  uint32_t max_shared_memory_per_block = 0;
  uint32_t max_shared_memory_per_sm = 0;
  uint32_t max_warps_per_sm = 0;
  uint32_t max_blocks_per_sm = 0;
  uint32_t l2_cache_bytes = 0;
};

struct GpuCollected {
  std::vector<GpuActivity> activities;
  std::vector<ApiCall> api_calls;
  std::unordered_map<uint32_t, uint64_t> external_ids;  // CUPTI correlation -> host range id
  std::vector<GpuDevice> devices;
  uint64_t dropped_records = 0;  // reported by CUPTI, or refused for lack of buffer space
};

// An mstx range that was given a CUDA stream (CUPTI's id for it).
struct StreamAnnotation {
  uint64_t range_id = 0;
  uint32_t stream = 0;
};

// One measured kernel's hardware metrics (ExperimentalConfig.gpu_metrics / l2_cache), named by
// its activity record: the correlation id and the start (the kernels of one CUDA graph launch
// share a correlation id).
struct KernelMetricRow {
  uint32_t correlation = 0;
  int64_t start_ns = 0;        // host clock (now_ns), as the activity's
  std::vector<double> values;  // parallel to KernelMetricsInput::columns; NaN: not evaluated
};

// What per-kernel metric collection measured in a session (cupti/kernel_metrics_collector.h).
struct KernelMetricsInput {
  std::vector<std::string> columns;  // export names, e.g. "SM Throughput (%)"
  std::vector<KernelMetricRow> kernels;
  // Kernels launched while measured but past the window's capacity: not measured.
  uint64_t kernels_left_out = 0;
  // Kernels measured whose values could not be given to a kernel record with certainty (the
  // measured ranges and the kernel records disagree in number): left out.
  uint64_t kernels_unmatched = 0;
};

// Everything GPU collection hands over at the end of a session.
struct GpuInput {
  GpuCollected collected;
  std::vector<StreamAnnotation> stream_annotations;
  KernelMetricsInput kernel_metrics;
  bool collected_any = false;  // GPU collection ran (even if it saw nothing)
};

}  // namespace perfprof
