#pragma once
// The activity records the CUPTI test double writes: which kinds it knows, the size of their
// structs, and pure functions that build each record from what a simulated call knows. Every
// record is zero-initialised (all bytes) with `kind` set, then filled, as cupti_activity.h
// documents the fields.
#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace fake_cupti {

// The first CUPTI API version that writes the current (13.x) record structs.
constexpr uint32_t kFirstVersionWithCurrentRecords = 130000;

// Size of the record struct CUPTI 12.x writes for a kind the double writes (CUPTI 12.4's
// cupti_activity.h names them: Kernel9, Memcpy5, Memset4, Device5, Synchronization, Memory3;
// the API, external correlation and graph trace records are the current ones). Each is a prefix
// of the current struct for the fields both have (activity_decoder.cpp checks perfprof's).
inline std::optional<size_t> record_size_12x(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel9);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy5);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory3);
    default: return std::nullopt;
  }
}

// Size of the (current) record struct of a kind the double writes; nullopt for other kinds.
inline std::optional<size_t> record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel13);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy7);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset5);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice6);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    default: return std::nullopt;
  }
}

// Size of the records of `kind` a CUPTI of API version `version` writes.
inline std::optional<size_t> record_size(CUpti_ActivityKind kind, uint32_t version) {
  const std::optional<size_t> current = record_size(kind);
  if (!current || version >= kFirstVersionWithCurrentRecords) return current;
  return record_size_12x(kind).value_or(*current);
}

// One record's bytes, ready to be copied into a client buffer.
using Record = std::vector<uint8_t>;

template <typename T>
Record pack(const T& record) {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert(sizeof(T) % ACTIVITY_RECORD_ALIGNMENT == 0, "records keep the 8-byte alignment");
  Record bytes(sizeof(T));
  std::memcpy(bytes.data(), &record, sizeof(T));
  return bytes;
}

template <typename T>
T blank_record(CUpti_ActivityKind kind) {
  T record;
  std::memset(&record, 0, sizeof(T));
  record.kind = kind;
  return record;
}

// One simulated CUDA API call as the host saw it.
struct ApiCall {
  uint32_t correlation_id = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t process_id = 0;
  uint32_t thread_id = 0;
};

// Where and when a call's device-side work (or wait) ran.
struct DeviceSpan {
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint64_t start = 0;
  uint64_t end = 0;
};

struct KernelLaunch {
  const char* name = nullptr;  // storage kept for the process lifetime
  uint32_t grid_x = 1;
  uint32_t block_x = 1;
  uint16_t registers_per_thread = 0;
  int32_t static_shared = 0;
  uint32_t dynamic_shared = 0;
  uint32_t graph_id = 0;        // a node of a CUDA graph: its graph's id
  uint64_t graph_node_id = 0;   // and its node's
};

struct DeviceDescription {
  uint32_t id = 0;
  const char* name = nullptr;  // storage kept for the process lifetime
  uint32_t sm_count = 0;
  uint64_t global_memory_bytes = 0;
  uint32_t cc_major = 0;
  uint32_t cc_minor = 0;
};

// kind is CUPTI_ACTIVITY_KIND_RUNTIME or CUPTI_ACTIVITY_KIND_DRIVER.
inline CUpti_ActivityAPI api_record(CUpti_ActivityKind kind, CUpti_CallbackId cbid,
                                    const ApiCall& call) {
  auto record = blank_record<CUpti_ActivityAPI>(kind);
  record.cbid = cbid;
  record.start = call.start;
  record.end = call.end;
  record.processId = call.process_id;
  record.threadId = call.thread_id;
  record.correlationId = call.correlation_id;
  record.returnValue = 0;  // cudaSuccess / CUDA_SUCCESS
  return record;
}

inline CUpti_ActivityExternalCorrelation external_correlation_record(
    CUpti_ExternalCorrelationKind external_kind, uint64_t external_id, uint32_t correlation_id) {
  auto record =
      blank_record<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  record.externalKind = external_kind;
  record.externalId = external_id;
  record.correlationId = correlation_id;
  return record;
}

// kind is CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL or CUPTI_ACTIVITY_KIND_KERNEL (same struct).
inline CUpti_ActivityKernel13 kernel_record(CUpti_ActivityKind kind, const KernelLaunch& launch,
                                            const DeviceSpan& span, uint32_t correlation_id) {
  auto record = blank_record<CUpti_ActivityKernel13>(kind);
  record.registersPerThread = launch.registers_per_thread;
  record.partitionedGlobalCacheRequested =
      CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  record.partitionedGlobalCacheExecuted =
      CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  record.start = span.start;
  record.end = span.end;
  record.completed = span.end;
  record.deviceId = span.device;
  record.contextId = span.context;
  record.streamId = span.stream;
  record.gridX = static_cast<int32_t>(launch.grid_x);
  record.gridY = 1;
  record.gridZ = 1;
  record.blockX = static_cast<int32_t>(launch.block_x);
  record.blockY = 1;
  record.blockZ = 1;
  record.staticSharedMemory = launch.static_shared;
  record.dynamicSharedMemory = static_cast<int32_t>(launch.dynamic_shared);
  record.correlationId = correlation_id;
  record.gridId = correlation_id;  // unique per launch, like the driver's grid ids
  record.name = launch.name;
  record.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  record.graphId = launch.graph_id;
  record.graphNodeId = launch.graph_node_id;
  return record;
}

// The (source, destination) memory kinds implied by a CUpti_ActivityMemcpyKind. Host memory is
// reported as pinned, as it must be for a truly asynchronous copy.
inline std::pair<CUpti_ActivityMemoryKind, CUpti_ActivityMemoryKind> memcpy_endpoints(
    uint8_t copy_kind) {
  constexpr auto host = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  constexpr auto device = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  constexpr auto array = CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return {host, device};
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return {device, host};
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return {host, array};
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return {array, host};
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return {array, array};
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return {array, device};
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return {device, array};
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return {device, device};
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return {host, host};
    default: return {CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN};
  }
}

inline CUpti_ActivityMemcpy7 memcpy_record(uint64_t bytes, uint8_t copy_kind,
                                           const DeviceSpan& span, uint32_t correlation_id) {
  auto record = blank_record<CUpti_ActivityMemcpy7>(CUPTI_ACTIVITY_KIND_MEMCPY);
  const auto [source, destination] = memcpy_endpoints(copy_kind);
  record.copyKind = copy_kind;
  record.srcKind = static_cast<uint8_t>(source);
  record.dstKind = static_cast<uint8_t>(destination);
  record.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  record.bytes = bytes;
  record.start = span.start;
  record.end = span.end;
  record.deviceId = span.device;
  record.contextId = span.context;
  record.streamId = span.stream;
  record.correlationId = correlation_id;
  record.runtimeCorrelationId = correlation_id;  // runtime and driver records share the id
  record.channelID = CUPTI_INVALID_CHANNEL_ID;
  return record;
}

inline CUpti_ActivityMemset5 memset_record(uint64_t bytes, uint32_t value, const DeviceSpan& span,
                                           uint32_t correlation_id) {
  auto record = blank_record<CUpti_ActivityMemset5>(CUPTI_ACTIVITY_KIND_MEMSET);
  record.value = value;
  record.bytes = bytes;
  record.start = span.start;
  record.end = span.end;
  record.deviceId = span.device;
  record.contextId = span.context;
  record.streamId = span.stream;
  record.correlationId = correlation_id;
  record.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  record.channelID = CUPTI_INVALID_CHANNEL_ID;
  return record;
}

inline CUpti_ActivitySynchronization2 stream_synchronize_record(const DeviceSpan& span,
                                                                uint32_t correlation_id) {
  auto record = blank_record<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  record.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  record.start = span.start;
  record.end = span.end;
  record.correlationId = correlation_id;
  record.contextId = span.context;
  record.streamId = span.stream;
  record.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;  // not an event synchronisation
  record.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  return record;
}

// A synchronous device-memory allocation or release made by `call` on `device`.
inline CUpti_ActivityMemory4 memory_record(CUpti_ActivityMemoryOperationType operation,
                                           uint64_t address, uint64_t bytes, uint32_t device,
                                           const ApiCall& call) {
  auto record = blank_record<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  record.memoryOperationType = operation;
  record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  record.correlationId = call.correlation_id;
  record.address = address;
  record.bytes = bytes;
  record.timestamp = call.start;
  record.processId = call.process_id;
  record.deviceId = device;
  record.contextId = CUPTI_INVALID_CONTEXT_ID;
  record.streamId = CUPTI_INVALID_STREAM_ID;  // not an async (stream-ordered) operation
  return record;
}

inline CUpti_ActivityGraphTrace2 graph_trace_record(uint32_t graph_id, const DeviceSpan& span,
                                                    uint32_t correlation_id) {
  auto record = blank_record<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  record.correlationId = correlation_id;
  record.start = span.start;
  record.end = span.end;
  record.deviceId = span.device;
  record.graphId = graph_id;
  record.contextId = span.context;
  record.streamId = span.stream;
  record.endDeviceId = span.device;
  record.endContextId = span.context;
  return record;
}

// A plausible recent data-centre GPU around the caller's numbers.
inline CUpti_ActivityDevice6 device_record(const DeviceDescription& device) {
  auto record = blank_record<CUpti_ActivityDevice6>(CUPTI_ACTIVITY_KIND_DEVICE);
  record.flags = CUPTI_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
  record.globalMemoryBandwidth = 3'350'000'000;  // kB/s
  record.globalMemorySize = device.global_memory_bytes;
  record.constantMemorySize = 64 * 1024;
  record.l2CacheSize = 50 * 1024 * 1024;
  record.numThreadsPerWarp = 32;
  record.coreClockRate = 1'755'000;  // kHz
  record.numMemcpyEngines = 4;
  record.numMultiprocessors = device.sm_count;
  record.maxIPC = 4;
  record.maxWarpsPerMultiprocessor = 64;
  record.maxBlocksPerMultiprocessor = 32;
  record.maxSharedMemoryPerMultiprocessor = 228 * 1024;
  record.maxRegistersPerMultiprocessor = 65536;
  record.maxRegistersPerBlock = 65536;
  record.maxSharedMemoryPerBlock = 48 * 1024;
  record.maxThreadsPerBlock = 1024;
  record.maxBlockDimX = 1024;
  record.maxBlockDimY = 1024;
  record.maxBlockDimZ = 64;
  record.maxGridDimX = 0x7fffffff;
  record.maxGridDimY = 65535;
  record.maxGridDimZ = 65535;
  record.computeCapabilityMajor = device.cc_major;
  record.computeCapabilityMinor = device.cc_minor;
  record.id = device.id;
  record.eccEnabled = 1;
  const char uuid_prefix[] = "fake-gpu";  // and the id in the last 4 bytes: unique per device
  std::memcpy(record.uuid.bytes, uuid_prefix, sizeof(uuid_prefix) - 1);
  std::memcpy(record.uuid.bytes + sizeof(record.uuid.bytes) - sizeof(device.id), &device.id,
              sizeof(device.id));
  record.name = device.name;
  record.isCudaVisible = 1;
  record.gpuInstanceId = UINT32_MAX;  // MIG disabled
  record.computeInstanceId = UINT32_MAX;
  record.numTpcs = device.sm_count / 2;
  return record;
}

}  // namespace fake_cupti
