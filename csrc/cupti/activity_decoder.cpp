#include "cupti/activity_decoder.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace perfprof {
namespace {

// The decoder reads the current structs; every older layout CUPTI 12.0+ may write must agree
// on the offsets of the fields read.
#define PERFPROF_SAME_OFFSET(Old, New, field) \
  static_assert(offsetof(Old, field) == offsetof(New, field), #Old "::" #field " moved")
#define PERFPROF_KERNEL_FIELDS(Old)                                             \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, start);                     \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, end);                       \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, deviceId);                  \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, contextId);                 \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, streamId);                  \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, gridX);                     \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, blockZ);                    \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, registersPerThread);        \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, staticSharedMemory);        \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, dynamicSharedMemory);       \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, correlationId);             \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, name)
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel5);
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel6);
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel7);
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel8);
// graphId: Kernel8 on (CUDA 11.1+), every layout CUPTI 12.0+ writes.
#define PERFPROF_KERNEL_GRAPH_FIELDS(Old) PERFPROF_SAME_OFFSET(Old, CUpti_ActivityKernel13, graphId)
PERFPROF_KERNEL_GRAPH_FIELDS(CUpti_ActivityKernel8);
PERFPROF_KERNEL_GRAPH_FIELDS(CUpti_ActivityKernel9);
PERFPROF_KERNEL_GRAPH_FIELDS(CUpti_ActivityKernel10);
PERFPROF_KERNEL_GRAPH_FIELDS(CUpti_ActivityKernel11);
PERFPROF_KERNEL_GRAPH_FIELDS(CUpti_ActivityKernel12);
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel9);
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel10);
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel11);
PERFPROF_KERNEL_FIELDS(CUpti_ActivityKernel12);
#define PERFPROF_MEMCPY_FIELDS(Old)                                \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, copyKind);      \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, srcKind);       \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, dstKind);       \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, bytes);         \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, start);         \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, end);           \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, deviceId);      \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, contextId);     \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, streamId);      \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemcpy7, correlationId)
PERFPROF_MEMCPY_FIELDS(CUpti_ActivityMemcpy4);
PERFPROF_MEMCPY_FIELDS(CUpti_ActivityMemcpy5);
PERFPROF_MEMCPY_FIELDS(CUpti_ActivityMemcpy6);
#define PERFPROF_MEMSET_FIELDS(Old)                               \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, value);        \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, bytes);        \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, start);        \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, end);          \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, deviceId);     \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, contextId);    \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, streamId);     \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemset5, correlationId)
PERFPROF_MEMSET_FIELDS(CUpti_ActivityMemset3);
PERFPROF_MEMSET_FIELDS(CUpti_ActivityMemset4);
#define PERFPROF_DEVICE_FIELDS(Old)                                                  \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityDevice6, globalMemorySize);                \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityDevice6, numMultiprocessors);              \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityDevice6, maxSharedMemoryPerMultiprocessor); \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityDevice6, maxThreadsPerBlock);              \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityDevice6, computeCapabilityMinor);          \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityDevice6, id);                              \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityDevice6, name)
PERFPROF_DEVICE_FIELDS(CUpti_ActivityDevice4);
PERFPROF_DEVICE_FIELDS(CUpti_ActivityDevice5);
#define PERFPROF_MEMORY_FIELDS(Old)                                        \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, memoryOperationType);   \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, memoryKind);            \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, correlationId);         \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, address);               \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, bytes);                 \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, timestamp);             \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, deviceId);              \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, contextId);             \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityMemory4, streamId)
PERFPROF_MEMORY_FIELDS(CUpti_ActivityMemory2);
PERFPROF_MEMORY_FIELDS(CUpti_ActivityMemory3);
#define PERFPROF_SYNCHRONIZATION_FIELDS(Old)                                  \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivitySynchronization2, type);            \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivitySynchronization2, start);           \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivitySynchronization2, end);             \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivitySynchronization2, correlationId);   \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivitySynchronization2, contextId);       \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivitySynchronization2, streamId)
PERFPROF_SYNCHRONIZATION_FIELDS(CUpti_ActivitySynchronization);
#define PERFPROF_GRAPH_TRACE_FIELDS(Old)                                   \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityGraphTrace2, start);             \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityGraphTrace2, end);               \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityGraphTrace2, deviceId);          \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityGraphTrace2, contextId);         \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityGraphTrace2, streamId);          \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityGraphTrace2, correlationId);     \
  PERFPROF_SAME_OFFSET(Old, CUpti_ActivityGraphTrace2, graphId)
PERFPROF_GRAPH_TRACE_FIELDS(CUpti_ActivityGraphTrace);
#undef PERFPROF_GRAPH_TRACE_FIELDS
#undef PERFPROF_SYNCHRONIZATION_FIELDS
#undef PERFPROF_MEMORY_FIELDS
#undef PERFPROF_KERNEL_GRAPH_FIELDS
#undef PERFPROF_DEVICE_FIELDS
#undef PERFPROF_MEMSET_FIELDS
#undef PERFPROF_MEMCPY_FIELDS
#undef PERFPROF_KERNEL_FIELDS
#undef PERFPROF_SAME_OFFSET

template <typename Record>
const Record& as(const CUpti_Activity& record) {
  return reinterpret_cast<const Record&>(record);
}

// Drops the "_v7000" version suffix CUPTI puts on callback names ("cudaLaunchKernel_v7000").
std::string without_version_suffix(const char* name) {
  std::string text(name);
  const size_t suffix = text.rfind("_v");
  if (suffix != std::string::npos && suffix + 2 < text.size() &&
      text.find_first_not_of("0123456789", suffix + 2) == std::string::npos) {
    text.resize(suffix);
  }
  return text;
}

// The fields every record of work queued on a stream carries, under the same names.
template <typename Record>
GpuActivity stream_work_row(GpuActivityKind kind, const Record& r) {
  GpuActivity row;
  row.kind = kind;
  row.start_ns = static_cast<int64_t>(r.start);
  row.end_ns = static_cast<int64_t>(r.end);
  row.device = r.deviceId;
  row.context = r.contextId;
  row.stream = r.streamId;
  row.correlation = r.correlationId;
  return row;
}

GpuActivity kernel_row(const CUpti_ActivityKernel13& k) {
  GpuActivity row = stream_work_row(GpuActivityKind::Kernel, k);
  row.grid[0] = static_cast<uint32_t>(k.gridX);
  row.grid[1] = static_cast<uint32_t>(k.gridY);
  row.grid[2] = static_cast<uint32_t>(k.gridZ);
  row.block[0] = static_cast<uint32_t>(k.blockX);
  row.block[1] = static_cast<uint32_t>(k.blockY);
  row.block[2] = static_cast<uint32_t>(k.blockZ);
  row.registers_per_thread = k.registersPerThread;
  row.static_shared_memory = k.staticSharedMemory;
  row.dynamic_shared_memory = k.dynamicSharedMemory;
  row.graph_id = k.graphId;  // 0 unless launched as a node of a CUDA graph
  return row;
}

GpuActivity memcpy_row(const CUpti_ActivityMemcpy7& m) {
  GpuActivity row = stream_work_row(GpuActivityKind::Memcpy, m);
  row.bytes = m.bytes;
  row.copy_kind = m.copyKind;
  return row;
}

GpuActivity memset_row(const CUpti_ActivityMemset5& m) {
  GpuActivity row = stream_work_row(GpuActivityKind::Memset, m);
  row.bytes = m.bytes;
  row.value = m.value;
  return row;
}

GpuActivity synchronization_row(const CUpti_ActivitySynchronization2& s) {
  GpuActivity row;
  row.kind = GpuActivityKind::Synchronization;
  row.start_ns = static_cast<int64_t>(s.start);
  row.end_ns = static_cast<int64_t>(s.end);
  row.context = s.contextId;
  row.stream = s.streamId;
  row.correlation = s.correlationId;
  row.value = static_cast<uint32_t>(s.type);
  return row;
}

GpuActivity memory_row(const CUpti_ActivityMemory4& m) {
  GpuActivity row;
  row.kind = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                 ? GpuActivityKind::MemoryFree
                 : GpuActivityKind::MemoryAlloc;
  row.start_ns = row.end_ns = static_cast<int64_t>(m.timestamp);
  row.device = m.deviceId;
  row.context = m.contextId;
  row.stream = m.streamId;
  row.correlation = m.correlationId;
  row.address = m.address;
  row.bytes = m.bytes;
  row.copy_kind = static_cast<uint8_t>(m.memoryKind);
  return row;
}

GpuActivity graph_row(const CUpti_ActivityGraphTrace2& g) {
  GpuActivity row = stream_work_row(GpuActivityKind::GraphLaunch, g);
  row.graph_id = g.graphId;
  return row;
}

GpuDevice device_of(const CUpti_ActivityDevice6& d) {
  GpuDevice device;
  device.id = d.id;
  device.name = d.name ? d.name : "";
  device.sm_count = d.numMultiprocessors;
  device.global_memory_bytes = d.globalMemorySize;
  device.memory_bandwidth_kbps = d.globalMemoryBandwidth;
  device.compute_major = d.computeCapabilityMajor;
  device.compute_minor = d.computeCapabilityMinor;
  device.warp_size = d.numThreadsPerWarp;
  device.max_threads_per_block = d.maxThreadsPerBlock;
  device.max_registers_per_block = d.maxRegistersPerBlock;
  device.max_registers_per_sm = d.maxRegistersPerMultiprocessor;
  device.max_shared_memory_per_block = d.maxSharedMemoryPerBlock;
  device.max_shared_memory_per_sm = d.maxSharedMemoryPerMultiprocessor;
  device.max_warps_per_sm = d.maxWarpsPerMultiprocessor;
  device.max_blocks_per_sm = d.maxBlocksPerMultiprocessor;
  device.l2_cache_bytes = d.l2CacheSize;
  return device;
}

// The bytes of each record kind the decoder reads: up to and including its last field read.
struct RequiredLayout {
  CUpti_ActivityKind kind;
  const char* name;
  size_t bytes;
};
#define PERFPROF_READ_UP_TO(Record, field) (offsetof(Record, field) + sizeof(Record::field))
constexpr RequiredLayout kRequiredLayouts[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel",
     std::max(PERFPROF_READ_UP_TO(CUpti_ActivityKernel13, name), PERFPROF_READ_UP_TO(CUpti_ActivityKernel13, graphId))},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy", PERFPROF_READ_UP_TO(CUpti_ActivityMemcpy7, correlationId)},
    {CUPTI_ACTIVITY_KIND_MEMSET, "memset", PERFPROF_READ_UP_TO(CUpti_ActivityMemset5, correlationId)},
    {CUPTI_ACTIVITY_KIND_DEVICE, "device", PERFPROF_READ_UP_TO(CUpti_ActivityDevice6, name)},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API", PERFPROF_READ_UP_TO(CUpti_ActivityAPI, correlationId)},
    {CUPTI_ACTIVITY_KIND_DRIVER, "driver API", PERFPROF_READ_UP_TO(CUpti_ActivityAPI, correlationId)},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external correlation",
     PERFPROF_READ_UP_TO(CUpti_ActivityExternalCorrelation, correlationId)},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization",
     PERFPROF_READ_UP_TO(CUpti_ActivitySynchronization2, streamId)},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "memory", PERFPROF_READ_UP_TO(CUpti_ActivityMemory4, streamId)},
    {CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "graph", PERFPROF_READ_UP_TO(CUpti_ActivityGraphTrace2, streamId)},
};
#undef PERFPROF_READ_UP_TO

}  // namespace

std::string ActivityDecoder::layout_problem(CuptiStructSize struct_size) {
  if (!struct_size) return {};  // before CUPTI 13: the compile-time checks above cover 11.x-12.x
  for (const RequiredLayout& layout : kRequiredLayouts) {
    size_t size = 0;
    if (struct_size(layout.kind, 0, &size) == CUPTI_SUCCESS && size < layout.bytes) {
      return fmt::format("this libcupti writes {} records of {} bytes; perfprof reads {} bytes of them "
                         "and does not know this layout", layout.name, size, layout.bytes);
    }
  }
  return {};
}

bool ActivityDecoder::decode(const CUpti_Activity& record, GpuCollected& out) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& kernel = as<CUpti_ActivityKernel13>(record);
      GpuActivity row = kernel_row(kernel);
      row.name = intern_name(kernel.name);
      out.activities.push_back(row);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      GpuActivity row = memcpy_row(as<CUpti_ActivityMemcpy7>(record));
      row.name = intern_name(memcpy_kind_name(row.copy_kind));
      out.activities.push_back(row);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      GpuActivity row = memset_row(as<CUpti_ActivityMemset5>(record));
      row.name = intern_name("Memset (Device)");
      out.activities.push_back(row);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      GpuActivity row = synchronization_row(as<CUpti_ActivitySynchronization2>(record));
      row.name = intern_name("Synchronization");
      out.activities.push_back(row);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      GpuActivity row = memory_row(as<CUpti_ActivityMemory4>(record));
      row.name = intern_name(row.kind == GpuActivityKind::MemoryFree ? "Memory Release" : "Memory Allocation");
      out.activities.push_back(row);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      // perfprof never enables this kind (activity_collector.cpp); another client that did
      // selected graph-level tracing for the process, and these are then all a graph shows.
      GpuActivity row = graph_row(as<CUpti_ActivityGraphTrace2>(record));
      row.name = intern_name("CUDA Graph");
      out.activities.push_back(row);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& api = as<CUpti_ActivityAPI>(record);
      const bool driver = record.kind == CUPTI_ACTIVITY_KIND_DRIVER;
      out.api_calls.push_back({driver, api.cbid, api_name(driver, api.cbid),
                               static_cast<int64_t>(api.start), static_cast<int64_t>(api.end),
                               static_cast<int64_t>(api.threadId), api.correlationId});
      return true;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& link = as<CUpti_ActivityExternalCorrelation>(record);
      if (link.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
        out.external_ids[link.correlationId] = link.externalId;
      }
      return true;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE:
      out.devices.push_back(device_of(as<CUpti_ActivityDevice6>(record)));
      return true;
    default:
      return false;
  }
}

StringId ActivityDecoder::intern_name(const char* name) {
  if (!name) return global_strings().intern("(unnamed)");
  auto [it, inserted] = names_.try_emplace(name, kEmptyString);
  if (inserted) it->second = global_strings().intern(demangled(name));
  return it->second;
}

// CUPTI reports C++ kernels by their mangled names; traces show them as torch does, demangled.
std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(name);
}

StringId ActivityDecoder::api_name(bool driver, uint32_t cbid) {
  const uint64_t key = (uint64_t{driver} << 32) | cbid;
  auto [it, inserted] = api_names_.try_emplace(key, kEmptyString);
  if (!inserted) return it->second;
  const char* name = nullptr;
  const auto domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (callback_name_ && callback_name_(domain, cbid, &name) == CUPTI_SUCCESS && name) {
    it->second = global_strings().intern(without_version_suffix(name));
  } else {
    it->second = global_strings().intern(fmt::format("{} API {}", driver ? "driver" : "runtime", cbid));
  }
  return it->second;
}

const char* memcpy_kind_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

}  // namespace perfprof
