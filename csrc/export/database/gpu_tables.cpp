// The GPU's activities as Nsight Systems exports them (CUPTI_ACTIVITY_KIND_*), and its devices
// (TARGET_INFO_GPU). Names are string ids; copy kinds are CUPTI's numbers, as in nsys.
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
}

}  // namespace perfprof::db
