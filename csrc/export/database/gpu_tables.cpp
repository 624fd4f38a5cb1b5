// The GPU's activities as Nsight Systems exports them (CUPTI_ACTIVITY_KIND_*), its devices
// (TARGET_INFO_GPU) and the hardware metrics measured per kernel (GPU_KERNEL_METRICS). Names are
// string ids; copy kinds are CUPTI's numbers, as in nsys.
#include <cmath>

#include "export/database/kernel_name.h"
#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

struct ActivityRow {
  const Context& c;
  const GpuActivity& a;
  StringId short_name;  // kernels only
};

using ActivityColumn = Column<ActivityRow>;

// The columns every activity table begins with, as nsys orders them.
std::vector<ActivityColumn> with_common_columns(std::vector<ActivityColumn> specific) {
  std::vector<ActivityColumn> columns = {
      {"start", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.c.time(r.a.start_ns)); }},
      {"end", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.c.time(r.a.end_ns)); }},
      {"deviceId", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.device); }},
      {"contextId", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.context); }},
      {"streamId", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.stream); }},
      {"correlationId", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.correlation); }},
      {"globalPid", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(global_pid(r.c.model.pid)); }},
  };
  columns.insert(columns.end(), specific.begin(), specific.end());
  return columns;
}

const Table<ActivityRow> kKernels{
    "CUPTI_ACTIVITY_KIND_KERNEL",
    with_common_columns({
        {"demangledName", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.name); }},
        {"shortName", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.short_name); }},
        {"mangledName", SqlType::Integer, [](const ActivityRow&) { return SqlValue(); }},  // not collected
        {"gridX", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.grid[0]); }},
        {"gridY", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.grid[1]); }},
        {"gridZ", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.grid[2]); }},
        {"blockX", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.block[0]); }},
        {"blockY", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.block[1]); }},
        {"blockZ", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.block[2]); }},
        {"registersPerThread", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.registers_per_thread); }},
        {"staticSharedMemory", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.static_shared_memory); }},
        {"dynamicSharedMemory", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.dynamic_shared_memory); }},
        {"graphId", SqlType::Integer, [](const ActivityRow& r) { return r.a.graph_id ? SqlValue(r.a.graph_id) : SqlValue(); }},
    })};

const Table<ActivityRow> kMemcpys{
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    with_common_columns({
        {"bytes", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.bytes); }},
        {"copyKind", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.copy_kind); }},
        {"srcKind", SqlType::Integer, [](const ActivityRow&) { return SqlValue(); }},  // not collected
        {"dstKind", SqlType::Integer, [](const ActivityRow&) { return SqlValue(); }},
    })};

const Table<ActivityRow> kMemsets{
    "CUPTI_ACTIVITY_KIND_MEMSET",
    with_common_columns({
        {"bytes", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.bytes); }},
        {"value", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.value); }},
    })};

const Table<ActivityRow> kSynchronizations{
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    with_common_columns({
        // perfprof's: what the wait was for, as the Chrome trace names it.
        {"nameId", SqlType::Integer, [](const ActivityRow& r) { return SqlValue(r.a.name); }},
    })};

const Table<GpuDevice> kDevices{
    "TARGET_INFO_GPU",
    {
        {"id", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.id); }},
        {"name", SqlType::Text, [](const GpuDevice& d) { return SqlValue(std::string_view(d.name)); }},
        {"totalMemory", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.global_memory_bytes); }},
        {"smCount", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.sm_count); }},
        {"computeMajor", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.compute_major); }},
        {"computeMinor", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.compute_minor); }},
        {"memoryBandwidth", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.memory_bandwidth_kbps * 1000); }},
        {"threadsPerWarp", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.warp_size); }},
        {"maxThreadsPerBlock", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.max_threads_per_block); }},
        {"maxRegistersPerBlock", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.max_registers_per_block); }},
        {"maxRegistersPerSm", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.max_registers_per_sm); }},
        {"maxShmemPerBlock", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.max_shared_memory_per_block); }},
        {"maxShmemPerSm", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.max_shared_memory_per_sm); }},
        {"maxWarpsPerSm", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.max_warps_per_sm); }},
        {"maxBlocksPerSm", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.max_blocks_per_sm); }},
        {"l2CacheSize", SqlType::Integer, [](const GpuDevice& d) { return SqlValue(d.l2_cache_bytes); }},
    }};

// One measured value of one kernel. The table is long (a row per kernel and metric), not a column
// per metric: which metrics a session measures is its choice, and the schema stays the same.
struct KernelMetricRow {
  const Context& c;
  const GpuActivity& a;
  StringId metric;  // the column's name
  double value;
};

const Table<KernelMetricRow> kKernelMetrics{
    "GPU_KERNEL_METRICS",
    {
        {"start", SqlType::Integer, [](const KernelMetricRow& r) { return SqlValue(r.c.time(r.a.start_ns)); }},
        {"deviceId", SqlType::Integer, [](const KernelMetricRow& r) { return SqlValue(r.a.device); }},
        {"streamId", SqlType::Integer, [](const KernelMetricRow& r) { return SqlValue(r.a.stream); }},
        {"correlationId", SqlType::Integer, [](const KernelMetricRow& r) { return SqlValue(r.a.correlation); }},
        {"metricNameId", SqlType::Integer, [](const KernelMetricRow& r) { return SqlValue(r.metric); }},
        {"value", SqlType::Real, [](const KernelMetricRow& r) { return SqlValue(r.value); }},
    }};

// Every kernel's measured values; a column not evaluated for a kernel (NaN) has no row.
void write_kernel_metrics(Context& c) {
  TableWriter<KernelMetricRow> writer(c.db, kKernelMetrics);
  const GpuTrace& gpu = c.model.gpu;
  for (size_t i = 0; i < gpu.activities.size(); ++i) {
    const double* values = gpu.kernel_metrics.of(i);
    if (values == nullptr || gpu.activities[i].kind != GpuActivityKind::Kernel) continue;
    for (size_t column = 0; column < gpu.kernel_metrics.columns.size(); ++column) {
      if (std::isfinite(values[column])) {
        writer.insert({c, gpu.activities[i], gpu.kernel_metrics.columns[column], values[column]});
      }
    }
  }
}

}  // namespace

void write_gpu_tables(Context& c) {
  TableWriter<ActivityRow> kernels(c.db, kKernels);
  TableWriter<ActivityRow> memcpys(c.db, kMemcpys);
  TableWriter<ActivityRow> memsets(c.db, kMemsets);
  TableWriter<ActivityRow> synchronizations(c.db, kSynchronizations);
  std::unordered_map<StringId, StringId> short_names;  // by demangled name
  for (const GpuActivity& a : c.model.gpu.activities) {
    switch (a.kind) {
      case GpuActivityKind::Kernel: {
        auto [found, added] = short_names.try_emplace(a.name);
        if (added) found->second = c.strings.id(short_kernel_name(c.model.str(a.name)));
        kernels.insert({c, a, found->second});
        break;
      }
      case GpuActivityKind::Memcpy: memcpys.insert({c, a, kEmptyString}); break;
      case GpuActivityKind::Memset: memsets.insert({c, a, kEmptyString}); break;
      case GpuActivityKind::Synchronization: synchronizations.insert({c, a, kEmptyString}); break;
      // Allocations, graph launches and stream annotations have no table yet (docs/formats/database.md).
      case GpuActivityKind::MemoryAlloc:
      case GpuActivityKind::MemoryFree:
      case GpuActivityKind::GraphLaunch:
      case GpuActivityKind::UserAnnotation: break;
    }
  }
  TableWriter<GpuDevice> devices(c.db, kDevices);
  for (const GpuDevice& device : c.model.gpu.devices) devices.insert(device);
  write_kernel_metrics(c);
}

}  // namespace perfprof::db
