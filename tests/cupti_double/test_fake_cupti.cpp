// Checks libperfprof_fake_cupti behaves like CUPTI's activity API. The library is loaded by
// path with dlopen and every function resolved with dlsym, as perfprof does with libcupti; the
// headers are used for types and signatures only.
#include <gtest/gtest.h>

#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_target.h>
#include <cupti_version.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_cupti_control.h"

namespace {

// --- The library, resolved at run time -------------------------------------------------------

#define FAKE_CUPTI_TEST_FUNCTIONS(X)         \
  X(cuptiGetVersion);                        \
  X(cuptiGetResultString);                   \
  X(cuptiActivityRegisterCallbacks);         \
  X(cuptiActivityEnable);                    \
  X(cuptiActivityDisable);                   \
  X(cuptiActivityFlushAll);                  \
  X(cuptiActivityGetNextRecord);             \
  X(cuptiActivityGetNumDroppedRecords);      \
  X(cuptiActivityPushExternalCorrelationId); \
  X(cuptiActivityPopExternalCorrelationId);  \
  X(cuptiGetTimestamp);                      \
  X(cuptiActivityRegisterTimestampCallback); \
  X(cuptiSetThreadIdType);                   \
  X(cuptiGetThreadIdType);                   \
  X(cuptiActivityGetStructSize);             \
  X(cuptiActivityEnableLaunchAttributes);    \
  X(cuptiFinalize);                          \
  X(cuptiProfilerInitialize);                \
  X(cuptiProfilerDeInitialize);              \
  X(cuptiDeviceGetChipName);                 \
  X(cuptiProfilerGetCounterAvailability);    \
  X(cuptiProfilerHostInitialize);            \
  X(cuptiProfilerHostDeinitialize);          \
  X(cuptiProfilerHostGetBaseMetrics);        \
  X(cuptiProfilerHostConfigAddMetrics);      \
  X(cuptiProfilerHostGetConfigImageSize);    \
  X(cuptiProfilerHostGetConfigImage);        \
  X(cuptiProfilerHostGetNumOfPasses);        \
  X(cuptiProfilerHostEvaluateToGpuValues);   \
  X(cuptiRangeProfilerEnable);               \
  X(cuptiRangeProfilerDisable);              \
  X(cuptiRangeProfilerGetCounterDataSize);   \
  X(cuptiRangeProfilerCounterDataImageInitialize); \
  X(cuptiRangeProfilerSetConfig);            \
  X(cuptiRangeProfilerStart);                \
  X(cuptiRangeProfilerStop);                 \
  X(cuptiRangeProfilerDecodeData);           \
  X(cuptiRangeProfilerGetCounterDataInfo);   \
  X(fake_cupti_reset);                       \
  X(fake_cupti_reset_keeping_callbacks);     \
  X(fake_cupti_set_version);                 \
  X(fake_cupti_fail);                        \
  X(fake_cupti_now);                         \
  X(fake_cupti_add_device);                  \
  X(fake_cupti_launch_kernel);               \
  X(fake_cupti_memcpy);                      \
  X(fake_cupti_memset);                      \
  X(fake_cupti_launch_kernel_at);            \
  X(fake_cupti_memcpy_at);                   \
  X(fake_cupti_memset_at);                   \
  X(fake_cupti_driver_call);                 \
  X(fake_cupti_synchronize);                 \
  X(fake_cupti_malloc);                      \
  X(fake_cupti_graph_launch);                \
  X(fake_cupti_drop_next);                   \
  X(fake_cupti_buffers_requested);           \
  X(fake_cupti_buffers_completed);           \
  X(fake_cupti_records_delivered);           \
  X(fake_cupti_external_stack_depth);        \
  X(fake_cupti_set_device_chip);             \
  X(fake_cupti_add_chip_metric);             \
  X(fake_cupti_set_kernel_metric);           \
  X(fake_cupti_set_metrics_per_pass);

struct Library {
#define FAKE_CUPTI_TEST_MEMBER(name) decltype(&::name) name = nullptr
  FAKE_CUPTI_TEST_FUNCTIONS(FAKE_CUPTI_TEST_MEMBER)
#undef FAKE_CUPTI_TEST_MEMBER
};

// Loaded once and never unloaded: the double's worker thread lives as long as the process.
const Library& lib() {
  static const Library library = [] {
    void* handle = dlopen(PERFPROF_FAKE_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      ADD_FAILURE() << "dlopen: " << dlerror();
      std::abort();
    }
    Library resolved;
#define FAKE_CUPTI_TEST_RESOLVE(name)                                        \
  resolved.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (!resolved.name) ADD_FAILURE() << "missing symbol " #name
    FAKE_CUPTI_TEST_FUNCTIONS(FAKE_CUPTI_TEST_RESOLVE)
#undef FAKE_CUPTI_TEST_RESOLVE
    return resolved;
  }();
  return library;
}

// --- A client: a buffer pool that copies out every delivered record ---------------------------
// It owns the buffers it lends, so those the double abandons (at reset or finalize) are freed
// by the next reset.

struct DeliveredRecord {
  std::vector<uint8_t> bytes;

  CUpti_ActivityKind kind() const { return as<CUpti_Activity>().kind; }
  template <typename T>
  T as() const {
    T record;
    std::memcpy(&record, bytes.data(), sizeof(T));
    return record;
  }
};

struct Delivery {
  std::thread::id thread;
  size_t records = 0;
  CUptiResult end_status = CUPTI_SUCCESS;  // what ended the cuptiActivityGetNextRecord loop
};

class Client {
 public:
  static Client& get() {
    static Client client;
    return client;
  }

  void reset(size_t buffer_size) {
    std::lock_guard<std::mutex> lock(mutex_);
    lent_.clear();
    buffer_size_ = buffer_size;
    max_records_ = 0;
    refuse_buffers_ = false;
    records_.clear();
    deliveries_.clear();
  }
  void refuse_buffers(bool refuse) {
    std::lock_guard<std::mutex> lock(mutex_);
    refuse_buffers_ = refuse;
  }
  void set_max_records(size_t max_records) {
    std::lock_guard<std::mutex> lock(mutex_);
    max_records_ = max_records;
  }
  std::vector<DeliveredRecord> records() {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }
  std::vector<Delivery> deliveries() {
    std::lock_guard<std::mutex> lock(mutex_);
    return deliveries_;
  }

  static void CUPTIAPI request(uint8_t** buffer, size_t* size, size_t* max_records) {
    get().on_request(buffer, size, max_records);
  }
  static void CUPTIAPI complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
    get().on_complete(buffer, valid_size);
  }

 private:
  // operator new[] memory is aligned for any scalar, so on 8-byte boundaries as CUPTI wants.
  void on_request(uint8_t** buffer, size_t* size, size_t* max_records) {
    std::lock_guard<std::mutex> lock(mutex_);
    *buffer = nullptr;
    *size = 0;
    *max_records = max_records_;
    if (refuse_buffers_) return;
    auto allocation = std::make_unique<uint8_t[]>(buffer_size_);
    *buffer = allocation.get();
    *size = buffer_size_;
    lent_.emplace(*buffer, std::move(allocation));
  }

  void on_complete(uint8_t* buffer, size_t valid_size) {
    std::vector<DeliveredRecord> records;
    CUpti_Activity* record = nullptr;
    CUptiResult status;
    while ((status = lib().cuptiActivityGetNextRecord(buffer, valid_size, &record)) ==
           CUPTI_SUCCESS) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(record);
      size_t size = 0;
      EXPECT_EQ(lib().cuptiActivityGetStructSize(record->kind, 0, &size), CUPTI_SUCCESS);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(record) % ACTIVITY_RECORD_ALIGNMENT, 0u);
      records.push_back({std::vector<uint8_t>(bytes, bytes + size)});
    }
    std::lock_guard<std::mutex> lock(mutex_);
    EXPECT_EQ(lent_.erase(buffer), 1u) << "a buffer this client lent";
    deliveries_.push_back({std::this_thread::get_id(), records.size(), status});
    records_.insert(records_.end(), records.begin(), records.end());
  }

  std::mutex mutex_;
  size_t buffer_size_ = 0;
  size_t max_records_ = 0;
  bool refuse_buffers_ = false;
  std::map<uint8_t*, std::unique_ptr<uint8_t[]>> lent_;
  std::vector<DeliveredRecord> records_;
  std::vector<Delivery> deliveries_;
};

// --- Fixture -----------------------------------------------------------------------------------

constexpr size_t kLargeBuffer = 1 << 20;

class FakeCupti : public ::testing::Test {
 protected:
  void SetUp() override {
    lib().fake_cupti_reset();
    Client::get().reset(kLargeBuffer);
    ASSERT_EQ(lib().cuptiActivityRegisterCallbacks(&Client::request, &Client::complete),
              CUPTI_SUCCESS);
  }

  static void enable(std::initializer_list<CUpti_ActivityKind> kinds) {
    for (CUpti_ActivityKind kind : kinds) ASSERT_EQ(lib().cuptiActivityEnable(kind), CUPTI_SUCCESS);
  }

  static uint32_t launch(const char* name = "kernel", uint64_t gpu_duration_ns = 5'000) {
    return lib().fake_cupti_launch_kernel(name, /*device=*/0, /*context_id=*/1, /*stream=*/7,
                                          gpu_duration_ns, /*grid_x=*/128, /*block_x=*/256,
                                          /*registers_per_thread=*/32, /*static_shared=*/1024,
                                          /*dynamic_shared=*/2048);
  }

  static CUptiResult push(CUpti_ExternalCorrelationKind kind, uint64_t id) {
    return lib().cuptiActivityPushExternalCorrelationId(kind, id);
  }
  static CUptiResult pop(CUpti_ExternalCorrelationKind kind, uint64_t* last_id) {
    return lib().cuptiActivityPopExternalCorrelationId(kind, last_id);
  }

  // Flushes and returns every record delivered so far.
  static std::vector<DeliveredRecord> flush() {
    EXPECT_EQ(lib().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
    return Client::get().records();
  }

  static std::vector<DeliveredRecord> of_kind(const std::vector<DeliveredRecord>& records,
                                              CUpti_ActivityKind kind) {
    std::vector<DeliveredRecord> matching;
    for (const DeliveredRecord& record : records) {
      if (record.kind() == kind) matching.push_back(record);
    }
    return matching;
  }
};

// --- Tests ---------------------------------------------------------------------------------

// A reset keeping the callbacks forgets everything else (enabled kinds too); a plain reset
// forgets the callbacks as well, so nothing more is delivered.
TEST_F(FakeCupti, AResetKeepingCallbacksStillDeliversToThem) {
  lib().fake_cupti_reset_keeping_callbacks();
  EXPECT_EQ(lib().fake_cupti_buffers_requested(), 0u);
  enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  launch();
  EXPECT_EQ(flush().size(), 1u);
  lib().fake_cupti_reset();
  enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  launch();
  EXPECT_EQ(lib().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_ERROR_INVALID_OPERATION);
  EXPECT_EQ(Client::get().records().size(), 1u);
}

TEST_F(FakeCupti, RecordsOfDisabledKindsAreNotProduced) {
  enable({CUPTI_ACTIVITY_KIND_MEMSET});
  launch();
  lib().fake_cupti_memcpy(4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 0, 1, 7, 1'000);
  lib().fake_cupti_memset(4096, 0, 0, 1, 7, 1'000);

  const auto records = flush();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind(), CUPTI_ACTIVITY_KIND_MEMSET);

  ASSERT_EQ(lib().cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS);
  lib().fake_cupti_memset(4096, 0, 0, 1, 7, 1'000);
  EXPECT_EQ(flush().size(), 1u);
}

TEST_F(FakeCupti, UnsupportedKindsAreRefused) {
  EXPECT_EQ(lib().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING), CUPTI_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(lib().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_COUNT), CUPTI_ERROR_INVALID_KIND);
}

TEST_F(FakeCupti, LaunchGivesRuntimeAndKernelRecordsWithOneCorrelationId) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  const uint32_t correlation_id = launch("gemm", 5'000);
  EXPECT_GE(correlation_id, 1u);

  const auto records = flush();
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(records[0].kind(), CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_EQ(records[1].kind(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const auto api = records[0].as<CUpti_ActivityAPI>();
  const auto kernel = records[1].as<CUpti_ActivityKernel13>();

  EXPECT_EQ(api.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  EXPECT_EQ(api.correlationId, correlation_id);
  EXPECT_EQ(api.processId, static_cast<uint32_t>(getpid()));
  EXPECT_GT(api.end, api.start);
  EXPECT_EQ(api.returnValue, 0u);

  EXPECT_EQ(kernel.correlationId, correlation_id);
  EXPECT_GE(kernel.start, api.end);
  EXPECT_EQ(kernel.end, kernel.start + 5'000);
  EXPECT_EQ(kernel.completed, kernel.end);
  EXPECT_STREQ(kernel.name, "gemm");
  EXPECT_EQ(kernel.deviceId, 0u);
  EXPECT_EQ(kernel.contextId, 1u);
  EXPECT_EQ(kernel.streamId, 7u);
  EXPECT_EQ(kernel.gridX, 128);
  EXPECT_EQ(kernel.gridY, 1);
  EXPECT_EQ(kernel.blockX, 256);
  EXPECT_EQ(kernel.blockZ, 1);
  EXPECT_EQ(kernel.registersPerThread, 32);
  EXPECT_EQ(kernel.staticSharedMemory, 1024);
  EXPECT_EQ(kernel.dynamicSharedMemory, 2048);
  EXPECT_EQ(kernel.launchType, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
  EXPECT_EQ(kernel.partitionedGlobalCacheRequested,
            CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED);

  EXPECT_EQ(launch(), correlation_id + 1);
}

TEST_F(FakeCupti, KernelKindAloneGivesKernelRecords) {
  enable({CUPTI_ACTIVITY_KIND_KERNEL});
  launch();
  const auto records = flush();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind(), CUPTI_ACTIVITY_KIND_KERNEL);
}

// Calls at explicit times give records at exactly those times, anywhere on the clock (an
// earlier kernel on the same stream included); work queued afterwards waits for them.
TEST_F(FakeCupti, CallsAtExplicitTimesGiveRecordsAtThoseTimes) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
          CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET});
  const uint64_t base = lib().fake_cupti_now() + 1'000'000'000;  // a second ahead: no waiting
  const uint32_t late = lib().fake_cupti_launch_kernel_at("late", 0, 1, 7, base + 40'000, 3'000,
                                                          base + 50'000, 20'000);
  const uint32_t early = lib().fake_cupti_launch_kernel_at("early", 0, 1, 7, base, 4'000,
                                                           base + 10'000, 5'000);
  const uint32_t copy = lib().fake_cupti_memcpy_at(
      1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1, 1, 3, base + 1'000, 2'000, base + 6'000, 7'000);
  const uint32_t fill =
      lib().fake_cupti_memset_at(4096, 0, 1, 1, 3, base + 2'000, 1'000, base + 13'000, 500);
  EXPECT_LT(lib().fake_cupti_now(), base) << "calls at explicit times do not hold the thread";
  const uint32_t queued = launch("queued", 1'000);

  std::map<uint32_t, CUpti_ActivityAPI> api;
  for (const auto& record : of_kind(flush(), CUPTI_ACTIVITY_KIND_RUNTIME)) {
    const auto call = record.as<CUpti_ActivityAPI>();
    api[call.correlationId] = call;
  }
  EXPECT_EQ(api.at(late).start, base + 40'000);
  EXPECT_EQ(api.at(late).end, base + 43'000);
  EXPECT_EQ(api.at(early).end, base + 4'000);
  EXPECT_EQ(api.at(copy).start, base + 1'000);
  EXPECT_EQ(api.at(copy).cbid, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  EXPECT_EQ(api.at(fill).end, base + 3'000);

  const auto records = Client::get().records();
  std::map<uint32_t, CUpti_ActivityKernel13> kernels;
  for (const auto& record : of_kind(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
    const auto kernel = record.as<CUpti_ActivityKernel13>();
    kernels[kernel.correlationId] = kernel;
  }
  EXPECT_EQ(kernels.at(late).start, base + 50'000);
  EXPECT_EQ(kernels.at(late).end, base + 70'000);
  EXPECT_EQ(kernels.at(early).start, base + 10'000);
  EXPECT_EQ(kernels.at(early).end, base + 15'000);
  EXPECT_STREQ(kernels.at(early).name, "early");
  EXPECT_EQ(kernels.at(early).streamId, 7u);
  EXPECT_EQ(kernels.at(queued).start, base + 70'000) << "queued after the stream's last work";

  const auto memcpy_record =
      of_kind(records, CUPTI_ACTIVITY_KIND_MEMCPY).at(0).as<CUpti_ActivityMemcpy7>();
  EXPECT_EQ(memcpy_record.correlationId, copy);
  EXPECT_EQ(memcpy_record.start, base + 6'000);
  EXPECT_EQ(memcpy_record.end, base + 13'000);
  EXPECT_EQ(memcpy_record.deviceId, 1u);
  EXPECT_EQ(memcpy_record.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  const auto memset_record =
      of_kind(records, CUPTI_ACTIVITY_KIND_MEMSET).at(0).as<CUpti_ActivityMemset5>();
  EXPECT_EQ(memset_record.correlationId, fill);
  EXPECT_EQ(memset_record.start, base + 13'000);
  EXPECT_EQ(memset_record.end, base + 13'500);
  EXPECT_EQ(memset_record.bytes, 4096u);
}

TEST_F(FakeCupti, ExternalIdsPushedOnThisThreadPrecedeTheApiRecord) {
  enable({CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME});
  ASSERT_EQ(push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 41), CUPTI_SUCCESS);
  ASSERT_EQ(push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42), CUPTI_SUCCESS);
  ASSERT_EQ(push(CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN, 7), CUPTI_SUCCESS);
  EXPECT_EQ(lib().fake_cupti_external_stack_depth(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0), 2);

  const uint32_t correlation_id = launch();
  std::thread([] { launch(); }).join();  // another thread's calls see none of this thread's ids

  const auto records = flush();
  ASSERT_EQ(records.size(), 4u);
  const auto unknown = records[0].as<CUpti_ActivityExternalCorrelation>();
  const auto custom0 = records[1].as<CUpti_ActivityExternalCorrelation>();
  EXPECT_EQ(records[0].kind(), CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  EXPECT_EQ(unknown.externalKind, CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN);
  EXPECT_EQ(unknown.externalId, 7u);
  EXPECT_EQ(unknown.correlationId, correlation_id);
  EXPECT_EQ(custom0.externalKind, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  EXPECT_EQ(custom0.externalId, 42u);  // the top of the stack
  EXPECT_EQ(custom0.correlationId, correlation_id);
  EXPECT_EQ(records[2].as<CUpti_ActivityAPI>().correlationId, correlation_id);
  EXPECT_EQ(records[3].kind(), CUPTI_ACTIVITY_KIND_RUNTIME);

  uint64_t last_id = 0;
  EXPECT_EQ(pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last_id), CUPTI_SUCCESS);
  EXPECT_EQ(last_id, 42u);
  EXPECT_EQ(pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last_id), CUPTI_SUCCESS);
  EXPECT_EQ(last_id, 41u);
  EXPECT_EQ(pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last_id), CUPTI_ERROR_QUEUE_EMPTY);
  EXPECT_EQ(push(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1), CUPTI_ERROR_INVALID_PARAMETER);

  lib().fake_cupti_reset();
  EXPECT_EQ(lib().fake_cupti_external_stack_depth(CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN), 0);
}

TEST_F(FakeCupti, FlushAllDeliversEveryRecordAndIterationEndsAtTheLast) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
          CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_DRIVER,
          CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
          CUPTI_ACTIVITY_KIND_GRAPH_TRACE});
  launch();
  const uint32_t copy =
      lib().fake_cupti_memcpy(1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 0, 1, 3, 8'000);
  lib().fake_cupti_memset(256, 0xff, 0, 1, 3, 500);
  lib().fake_cupti_driver_call(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 300);
  const uint32_t sync = lib().fake_cupti_synchronize(0, 1, 3, 40'000);
  lib().fake_cupti_malloc(0x7f0000000000, 1 << 20, 0, 0);
  lib().fake_cupti_malloc(0x7f0000000000, 1 << 20, 0, 1);
  const uint32_t graph = lib().fake_cupti_graph_launch(0, 1, 3, 9, 2, 35'000);  // graph-level: GRAPH_TRACE enabled
  EXPECT_TRUE(Client::get().records().empty()) << "nothing is delivered before a flush";

  const auto records = flush();
  ASSERT_EQ(records.size(), 15u);  // 7 runtime calls with their device records, 1 driver call
  EXPECT_EQ(lib().fake_cupti_records_delivered(), 15u);
  for (const Delivery& delivery : Client::get().deliveries()) {
    EXPECT_EQ(delivery.end_status, CUPTI_ERROR_MAX_LIMIT_REACHED);
  }

  const auto memcpy_record =
      of_kind(records, CUPTI_ACTIVITY_KIND_MEMCPY).at(0).as<CUpti_ActivityMemcpy7>();
  EXPECT_EQ(memcpy_record.correlationId, copy);
  EXPECT_EQ(memcpy_record.bytes, 1u << 20);
  EXPECT_EQ(memcpy_record.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(memcpy_record.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  EXPECT_EQ(memcpy_record.streamId, 3u);
  EXPECT_EQ(memcpy_record.end - memcpy_record.start, 8'000u);

  EXPECT_EQ(of_kind(records, CUPTI_ACTIVITY_KIND_MEMSET).at(0).as<CUpti_ActivityMemset5>().value,
            0xffu);
  EXPECT_EQ(of_kind(records, CUPTI_ACTIVITY_KIND_DRIVER).at(0).as<CUpti_ActivityAPI>().cbid,
            static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));

  const auto synchronization = of_kind(records, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
                                   .at(0)
                                   .as<CUpti_ActivitySynchronization2>();
  EXPECT_EQ(synchronization.type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(synchronization.correlationId, sync);
  EXPECT_EQ(synchronization.end - synchronization.start, 40'000u);

  const auto memory = of_kind(records, CUPTI_ACTIVITY_KIND_MEMORY2);
  ASSERT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory[0].as<CUpti_ActivityMemory4>().memoryOperationType,
            CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
  EXPECT_EQ(memory[1].as<CUpti_ActivityMemory4>().memoryOperationType,
            CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
  EXPECT_EQ(memory[1].as<CUpti_ActivityMemory4>().address, 0x7f0000000000u);

  const auto graph_trace =
      of_kind(records, CUPTI_ACTIVITY_KIND_GRAPH_TRACE).at(0).as<CUpti_ActivityGraphTrace2>();
  EXPECT_EQ(graph_trace.correlationId, graph);
  EXPECT_EQ(graph_trace.graphId, 9u);
}

TEST_F(FakeCupti, GetNextRecordStopsAtRecordsOfUnknownKind) {
  alignas(8) uint8_t buffer[64] = {};
  const CUpti_ActivityKind unknown = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  std::memcpy(buffer, &unknown, sizeof(unknown));
  CUpti_Activity* record = nullptr;
  EXPECT_EQ(lib().cuptiActivityGetNextRecord(buffer, sizeof(buffer), &record),
            CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(lib().cuptiActivityGetNextRecord(buffer, 0, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
}

TEST_F(FakeCupti, ManyRecordsAcrossSmallBuffersFromManyThreadsAreAllDelivered) {
  Client::get().reset(1024);  // a few records a buffer: most buffers complete on the worker
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  constexpr int kThreads = 4;
  constexpr int kLaunchesPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kLaunchesPerThread; ++i) launch();
    });
  }
  for (std::thread& thread : threads) thread.join();

  const auto records = flush();
  constexpr size_t kLaunches = kThreads * kLaunchesPerThread;
  ASSERT_EQ(records.size(), 2 * kLaunches);
  std::set<uint32_t> api_ids;
  std::set<uint32_t> kernel_ids;
  for (const DeliveredRecord& record : records) {
    if (record.kind() == CUPTI_ACTIVITY_KIND_RUNTIME) {
      api_ids.insert(record.as<CUpti_ActivityAPI>().correlationId);
    } else if (record.kind() == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      kernel_ids.insert(record.as<CUpti_ActivityKernel13>().correlationId);
    }
  }
  EXPECT_EQ(api_ids.size(), kLaunches);
  EXPECT_EQ(kernel_ids, api_ids);

  const auto deliveries = Client::get().deliveries();
  EXPECT_GT(deliveries.size(), kLaunches / 4);
  bool any_on_worker = false;
  for (const Delivery& delivery : deliveries) {
    any_on_worker |= delivery.thread != std::this_thread::get_id();
  }
  EXPECT_TRUE(any_on_worker);
  EXPECT_EQ(lib().fake_cupti_buffers_completed(), deliveries.size());
  EXPECT_EQ(lib().fake_cupti_buffers_requested(), deliveries.size());
  EXPECT_EQ(lib().fake_cupti_records_delivered(), records.size());
  size_t dropped = 1;
  EXPECT_EQ(lib().cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u);
}

TEST_F(FakeCupti, MaxNumRecordsLimitsRecordsPerBuffer) {
  Client::get().set_max_records(3);
  enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (int i = 0; i < 10; ++i) launch();
  EXPECT_EQ(flush().size(), 10u);
  for (const Delivery& delivery : Client::get().deliveries()) EXPECT_LE(delivery.records, 3u);
  EXPECT_EQ(Client::get().deliveries().size(), 4u);
}

TEST_F(FakeCupti, RecordsWithoutBufferSpaceAreDroppedAndCounted) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  Client::get().refuse_buffers(true);
  for (int i = 0; i < 3; ++i) launch();
  Client::get().refuse_buffers(false);
  lib().fake_cupti_drop_next(1);
  launch();  // its runtime record is dropped, its kernel record kept

  const auto records = flush();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  size_t dropped = 0;
  ASSERT_EQ(lib().cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 7u);
  ASSERT_EQ(lib().cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u) << "the count is reset by each query";
}

// CUPTI keeps the drop count apart from its buffers: records dropped after the last buffer was
// handed over come with no completion (a flush has no buffer to complete, not even an empty
// one), so only the query reports them.
TEST_F(FakeCupti, DropsAfterTheLastCompletedBufferComeWithNoCompletion) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  launch();
  ASSERT_EQ(flush().size(), 2u);
  Client::get().refuse_buffers(true);
  launch();  // both records find no buffer

  EXPECT_EQ(flush().size(), 2u) << "nothing new is delivered";
  EXPECT_EQ(Client::get().deliveries().size(), 1u) << "the second flush completed no buffer";
  EXPECT_EQ(lib().fake_cupti_buffers_requested(), 3u) << "one granted, then one refused per record";
  size_t dropped = 0;
  ASSERT_EQ(lib().cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 2u);
}

TEST_F(FakeCupti, BufferTooSmallForARecordIsHandedBackEmpty) {
  Client::get().reset(sizeof(CUpti_ActivityAPI) + 8);  // room for an API record, not a kernel
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  launch();

  const auto records = flush();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind(), CUPTI_ACTIVITY_KIND_RUNTIME);
  size_t dropped = 0;
  ASSERT_EQ(lib().cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 1u) << "the kernel record";
  // The runtime record's buffer, and the too small one got for the kernel record, returned empty.
  const auto deliveries = Client::get().deliveries();
  ASSERT_EQ(deliveries.size(), 2u);
  EXPECT_EQ(deliveries[0].records + deliveries[1].records, 1u);
  EXPECT_EQ(lib().fake_cupti_buffers_requested(), 2u);
}

TEST_F(FakeCupti, InjectedFailureIsReturnedAndNamed) {
  lib().fake_cupti_fail("cuptiActivityEnable", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  const CUptiResult result = lib().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  EXPECT_EQ(result, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  const char* name = nullptr;
  ASSERT_EQ(lib().cuptiGetResultString(result, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  EXPECT_EQ(lib().cuptiGetResultString(static_cast<CUptiResult>(12345), &name),
            CUPTI_ERROR_INVALID_PARAMETER);

  launch();
  EXPECT_TRUE(flush().empty()) << "the failed call enabled nothing";
  lib().fake_cupti_fail("cuptiActivityEnable", CUPTI_SUCCESS);
  EXPECT_EQ(lib().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
}

uint64_t CUPTIAPI counting_clock() {
  static std::atomic<uint64_t> ticks{1'000'000};
  return ticks.fetch_add(100);
}

TEST_F(FakeCupti, RegisteredTimestampCallbackIsTheClock) {
  const uint64_t realtime = lib().fake_cupti_now();
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  EXPECT_NEAR(static_cast<double>(realtime), now.tv_sec * 1e9 + now.tv_nsec, 1e9)
      << "CLOCK_REALTIME by default";

  ASSERT_EQ(lib().cuptiActivityRegisterTimestampCallback(&counting_clock), CUPTI_SUCCESS);
  enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  uint64_t before = 0;
  ASSERT_EQ(lib().cuptiGetTimestamp(&before), CUPTI_SUCCESS);
  launch();
  const uint64_t after = lib().fake_cupti_now();
  EXPECT_LT(before, 2'000'000u);  // counting_clock's, not CLOCK_REALTIME
  // The launch read the clock at its start, then until the end of its 2 us API record.
  EXPECT_GE(after, before + 100 + 2'000);
  EXPECT_LT(after, before + 100 + 2'000 + 300);

  const auto api = flush().at(0).as<CUpti_ActivityAPI>();
  EXPECT_EQ(api.start, before + 100);
}

// Issue 33 point 10: streams stayed busy until a time of the clock before (a static "busy until"
// never reset): after a switch from CLOCK_REALTIME to a smaller clock, kernels were stamped
// decades ahead, near twice the Unix epoch once exported.
TEST_F(FakeCupti, StreamsFollowTheClockAndAResetIdlesThem) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  launch("on CLOCK_REALTIME", 1'000'000'000);  // keeps stream 7 busy for a second of CLOCK_REALTIME
  ASSERT_EQ(lib().cuptiActivityRegisterTimestampCallback(&counting_clock), CUPTI_SUCCESS);
  const uint32_t after_switch = launch("on the new clock");
  flush();  // a reset forgets what was not delivered
  lib().fake_cupti_reset_keeping_callbacks();
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  launch("busy for a second", 1'000'000'000);
  flush();
  lib().fake_cupti_reset_keeping_callbacks();
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  const uint32_t after_reset = launch("after a reset");
  const auto records = flush();
  for (const uint32_t correlation : {after_switch, after_reset}) {
    CUpti_ActivityAPI api{};
    CUpti_ActivityKernel13 kernel{};
    for (const DeliveredRecord& record : records) {
      if (record.kind() == CUPTI_ACTIVITY_KIND_RUNTIME && record.as<CUpti_ActivityAPI>().correlationId == correlation) {
        api = record.as<CUpti_ActivityAPI>();
      }
      if (record.kind() == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
          record.as<CUpti_ActivityKernel13>().correlationId == correlation) {
        kernel = record.as<CUpti_ActivityKernel13>();
      }
    }
    ASSERT_NE(api.correlationId, 0u);
    EXPECT_EQ(kernel.start, api.end + 1'000) << "1 us after its launch, on an idle stream";
  }
}

TEST_F(FakeCupti, ThreadIdsFollowTheThreadIdType) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  CUpti_ActivityThreadIdType type = CUPTI_ACTIVITY_THREAD_ID_TYPE_SIZE;
  ASSERT_EQ(lib().cuptiGetThreadIdType(&type), CUPTI_SUCCESS);
  EXPECT_EQ(type, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
  launch();
  ASSERT_EQ(lib().cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
  launch();

  const auto records = flush();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].as<CUpti_ActivityAPI>().threadId, static_cast<uint32_t>(pthread_self()));
  EXPECT_EQ(records[1].as<CUpti_ActivityAPI>().threadId,
            static_cast<uint32_t>(syscall(SYS_gettid)));
}

TEST_F(FakeCupti, EnablingDeviceReportsEveryDevice) {
  lib().fake_cupti_add_device(0, "Fake H100", 132, 80ull << 30, 9, 0);
  lib().fake_cupti_add_device(1, "Fake B200", 148, 180ull << 30, 10, 0);
  enable({CUPTI_ACTIVITY_KIND_DEVICE});

  const auto records = flush();
  ASSERT_EQ(records.size(), 2u);
  const auto h100 = records[0].as<CUpti_ActivityDevice6>();
  EXPECT_EQ(records[0].kind(), CUPTI_ACTIVITY_KIND_DEVICE);
  EXPECT_EQ(h100.id, 0u);
  EXPECT_STREQ(h100.name, "Fake H100");
  EXPECT_EQ(h100.numMultiprocessors, 132u);
  EXPECT_EQ(h100.globalMemorySize, 80ull << 30);
  EXPECT_EQ(h100.computeCapabilityMajor, 9u);
  EXPECT_EQ(h100.numThreadsPerWarp, 32u);
  EXPECT_EQ(h100.maxThreadsPerBlock, 1024u);
  const auto b200 = records[1].as<CUpti_ActivityDevice6>();
  EXPECT_EQ(b200.id, 1u);
  EXPECT_EQ(b200.computeCapabilityMajor, 10u);
  EXPECT_NE(std::memcmp(&h100.uuid, &b200.uuid, sizeof(CUuuid)), 0);
}

TEST_F(FakeCupti, VersionAndStructSizes) {
  uint32_t version = 0;
  ASSERT_EQ(lib().cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  lib().fake_cupti_set_version(130000);
  ASSERT_EQ(lib().cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, 130000u);

  size_t size = 0;
  ASSERT_EQ(lib().cuptiActivityGetStructSize(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 0, &size),
            CUPTI_SUCCESS);
  EXPECT_EQ(size, sizeof(CUpti_ActivityKernel13));
  ASSERT_EQ(lib().cuptiActivityGetStructSize(CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_API_VERSION, &size),
            CUPTI_SUCCESS);
  EXPECT_EQ(size, sizeof(CUpti_ActivityMemory4));
  EXPECT_EQ(lib().cuptiActivityGetStructSize(CUPTI_ACTIVITY_KIND_RUNTIME, 120800, &size),
            CUPTI_ERROR_NOT_SUPPORTED);
}

// Issue 33 point 7: the double wrote 13.x-size records whatever version it reported.
TEST_F(FakeCupti, A12xVersionWrites12xSizeRecords) {
  lib().fake_cupti_set_version(22);  // CUDA 12.4
  enable({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY});
  const uint32_t kernel = launch();
  lib().fake_cupti_memcpy(4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 0, 1, 7, 1'000);
  const auto records = flush();
  ASSERT_EQ(records.size(), 4u);
  const DeliveredRecord kernel_record = of_kind(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).at(0);
  EXPECT_EQ(kernel_record.bytes.size(), sizeof(CUpti_ActivityKernel9));
  EXPECT_LT(sizeof(CUpti_ActivityKernel9), sizeof(CUpti_ActivityKernel13));
  EXPECT_EQ(kernel_record.as<CUpti_ActivityKernel9>().correlationId, kernel);
  EXPECT_EQ(kernel_record.as<CUpti_ActivityKernel9>().gridX, 128);
  const DeliveredRecord copy = of_kind(records, CUPTI_ACTIVITY_KIND_MEMCPY).at(0);
  EXPECT_EQ(copy.bytes.size(), sizeof(CUpti_ActivityMemcpy5));
  EXPECT_EQ(copy.as<CUpti_ActivityMemcpy5>().bytes, 4096u);
  EXPECT_EQ(of_kind(records, CUPTI_ACTIVITY_KIND_RUNTIME).at(0).bytes.size(), sizeof(CUpti_ActivityAPI));
}

TEST_F(FakeCupti, FinalizeDisablesEverythingAndForgetsCallbacks) {
  enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  launch();
  EXPECT_EQ(flush().size(), 1u);
  launch();  // never flushed: lost at cuptiFinalize
  ASSERT_EQ(lib().cuptiFinalize(), CUPTI_SUCCESS);
  EXPECT_EQ(lib().cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION)
      << "no callbacks any more";

  ASSERT_EQ(lib().cuptiActivityRegisterCallbacks(&Client::request, &Client::complete),
            CUPTI_SUCCESS);
  launch();
  EXPECT_EQ(flush().size(), 1u) << "nothing new: RUNTIME was disabled by cuptiFinalize";
  EXPECT_EQ(lib().fake_cupti_records_delivered(), 1u);
}

// --- Per-kernel metrics: the Profiler Host and Range Profiler APIs --------------------------

template <typename Params>
Params params(size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}
#define PARAMS(Type) params<Type>(Type##_STRUCT_SIZE)

CUcontext context_handle(uint32_t context_id) {
  return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(context_id));
}

TEST_F(FakeCupti, ProfilerParamsAreCheckedAsTheHeadersSay) {
  auto init = PARAMS(CUpti_Profiler_Initialize_Params);
  auto chip = PARAMS(CUpti_Device_GetChipName_Params);
  lib().fake_cupti_set_device_chip(0, "GA100");
  EXPECT_EQ(lib().cuptiDeviceGetChipName(&chip), CUPTI_ERROR_NOT_INITIALIZED);
  init.structSize = 0;
  EXPECT_EQ(lib().cuptiProfilerInitialize(&init), CUPTI_ERROR_INVALID_PARAMETER);
  init.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
  int not_null = 0;
  init.pPriv = &not_null;
  EXPECT_EQ(lib().cuptiProfilerInitialize(&init), CUPTI_ERROR_INVALID_PARAMETER) << "pPriv must be NULL";
  init.pPriv = nullptr;
  ASSERT_EQ(lib().cuptiProfilerInitialize(&init), CUPTI_SUCCESS);
  ASSERT_EQ(lib().cuptiDeviceGetChipName(&chip), CUPTI_SUCCESS);
  EXPECT_STREQ(chip.pChipName, "GA100");
  chip.deviceIndex = 1;
  EXPECT_EQ(lib().cuptiDeviceGetChipName(&chip), CUPTI_ERROR_INVALID_DEVICE);

  // A size from before cacheControlMode (CUDA 13.4) is accepted; one short of it is not.
  auto enable = params<CUpti_RangeProfiler_Enable_Params>(
      CUPTI_PROFILER_STRUCT_SIZE(CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject) - 1);
  enable.ctx = context_handle(1);
  EXPECT_EQ(lib().cuptiRangeProfilerEnable(&enable), CUPTI_ERROR_INVALID_PARAMETER);
  enable.structSize += 1;
  ASSERT_EQ(lib().cuptiRangeProfilerEnable(&enable), CUPTI_SUCCESS);
  EXPECT_NE(enable.pRangeProfilerObject, nullptr);

  // Counter availability: the size with no image, then the image.
  auto availability = PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  availability.ctx = context_handle(1);
  ASSERT_EQ(lib().cuptiProfilerGetCounterAvailability(&availability), CUPTI_SUCCESS);
  std::vector<uint8_t> image(availability.counterAvailabilityImageSize);
  ASSERT_FALSE(image.empty());
  availability.pCounterAvailabilityImage = image.data();
  availability.counterAvailabilityImageSize = image.size() - 1;
  EXPECT_EQ(lib().cuptiProfilerGetCounterAvailability(&availability), CUPTI_ERROR_INVALID_PARAMETER);
  availability.counterAvailabilityImageSize = image.size();
  EXPECT_EQ(lib().cuptiProfilerGetCounterAvailability(&availability), CUPTI_SUCCESS);

  auto host = PARAMS(CUpti_Profiler_Host_Initialize_Params);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = "GB999";
  EXPECT_EQ(lib().cuptiProfilerHostInitialize(&host), CUPTI_ERROR_INVALID_CHIP_NAME);
}

// The whole flow by hand, as the headers describe it: a host object configures the metrics, the
// range profiler measures each kernel of its context as an auto range, the host evaluates them.
TEST_F(FakeCupti, ARangeProfilerMeasuresTheKernelsOfItsContextInLaunchOrder) {
  lib().fake_cupti_add_chip_metric("GA100", CUPTI_METRIC_TYPE_COUNTER, "dram__bytes_read");
  lib().fake_cupti_add_chip_metric("GA100", CUPTI_METRIC_TYPE_RATIO, "lts__t_sector_hit_rate");
  lib().fake_cupti_set_kernel_metric("gemm", "dram__bytes_read.sum", 4096);
  lib().fake_cupti_set_kernel_metric("gemm", "lts__t_sector_hit_rate.pct", 75);
  lib().fake_cupti_set_kernel_metric("relu", "dram__bytes_read.sum", 64);
  lib().fake_cupti_set_metrics_per_pass(1);
  const char* metrics[] = {"dram__bytes_read.sum", "lts__t_sector_hit_rate.pct"};
  auto init = PARAMS(CUpti_Profiler_Initialize_Params);
  ASSERT_EQ(lib().cuptiProfilerInitialize(&init), CUPTI_SUCCESS);

  auto host = PARAMS(CUpti_Profiler_Host_Initialize_Params);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = "GA100";
  ASSERT_EQ(lib().cuptiProfilerHostInitialize(&host), CUPTI_SUCCESS);
  auto base = PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
  base.pHostObject = host.pHostObject;
  base.metricType = CUPTI_METRIC_TYPE_RATIO;
  ASSERT_EQ(lib().cuptiProfilerHostGetBaseMetrics(&base), CUPTI_SUCCESS);
  ASSERT_EQ(base.numMetrics, 1u);
  EXPECT_STREQ(base.ppMetricNames[0], "lts__t_sector_hit_rate");

  auto add = PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host.pHostObject;
  const char* unknown[] = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  add.ppMetricNames = unknown;
  add.numMetrics = 1;
  EXPECT_EQ(lib().cuptiProfilerHostConfigAddMetrics(&add), CUPTI_ERROR_INVALID_METRIC_NAME);
  add.ppMetricNames = metrics;
  add.numMetrics = 2;
  ASSERT_EQ(lib().cuptiProfilerHostConfigAddMetrics(&add), CUPTI_SUCCESS);
  auto config_size = PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  config_size.pHostObject = host.pHostObject;
  ASSERT_EQ(lib().cuptiProfilerHostGetConfigImageSize(&config_size), CUPTI_SUCCESS);
  std::vector<uint8_t> config(config_size.configImageSize);
  auto config_image = PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  config_image.pHostObject = host.pHostObject;
  config_image.pConfigImage = config.data();
  config_image.configImageSize = config.size() - 1;
  EXPECT_EQ(lib().cuptiProfilerHostGetConfigImage(&config_image), CUPTI_ERROR_INVALID_PARAMETER);
  config_image.configImageSize = config.size();
  ASSERT_EQ(lib().cuptiProfilerHostGetConfigImage(&config_image), CUPTI_SUCCESS);
  auto passes = PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  passes.pConfigImage = config.data();
  passes.configImageSize = config.size();
  ASSERT_EQ(lib().cuptiProfilerHostGetNumOfPasses(&passes), CUPTI_SUCCESS);
  EXPECT_EQ(passes.numOfPasses, 2u);

  auto enable = PARAMS(CUpti_RangeProfiler_Enable_Params);
  enable.ctx = context_handle(1);
  ASSERT_EQ(lib().cuptiRangeProfilerEnable(&enable), CUPTI_SUCCESS);
  auto size = PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = enable.pRangeProfilerObject;
  size.pMetricNames = metrics;
  size.numMetrics = 2;
  size.maxNumOfRanges = 2;
  size.maxNumRangeTreeNodes = 2;
  ASSERT_EQ(lib().cuptiRangeProfilerGetCounterDataSize(&size), CUPTI_SUCCESS);
  std::vector<uint8_t> counter_data(size.counterDataSize);
  auto initialize = PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  initialize.pRangeProfilerObject = enable.pRangeProfilerObject;
  initialize.counterDataSize = counter_data.size();
  initialize.pCounterData = counter_data.data();
  ASSERT_EQ(lib().cuptiRangeProfilerCounterDataImageInitialize(&initialize), CUPTI_SUCCESS);

  auto set_config = PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  set_config.pRangeProfilerObject = enable.pRangeProfilerObject;
  set_config.configSize = config.size();
  set_config.pConfig = config.data();
  set_config.counterDataImageSize = counter_data.size();
  set_config.pCounterDataImage = counter_data.data();
  set_config.range = CUPTI_AutoRange;
  set_config.replayMode = CUPTI_UserReplay;
  set_config.maxRangesPerPass = 2;
  set_config.numNestingLevels = 1;
  set_config.minNestingLevel = 1;
  set_config.targetNestingLevel = 1;
  EXPECT_EQ(lib().cuptiRangeProfilerSetConfig(&set_config), CUPTI_ERROR_NOT_SUPPORTED)
      << "two passes need a replay the double does not do by user";
  set_config.replayMode = CUPTI_KernelReplay;
  ASSERT_EQ(lib().cuptiRangeProfilerSetConfig(&set_config), CUPTI_SUCCESS);

  auto start = PARAMS(CUpti_RangeProfiler_Start_Params);
  start.pRangeProfilerObject = enable.pRangeProfilerObject;
  launch("gemm");  // before the start
  ASSERT_EQ(lib().cuptiRangeProfilerStart(&start), CUPTI_SUCCESS);
  lib().fake_cupti_launch_kernel("gemm", 0, /*context_id=*/2, 7, 1'000, 1, 1, 1, 0, 0);
  launch("relu");
  launch("gemm");
  launch("relu");  // past maxNumOfRanges: dropped
  auto decode = PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = enable.pRangeProfilerObject;
  EXPECT_EQ(lib().cuptiRangeProfilerDecodeData(&decode), CUPTI_ERROR_INVALID_OPERATION)
      << "decoding follows the stop";
  auto stop = PARAMS(CUpti_RangeProfiler_Stop_Params);
  stop.pRangeProfilerObject = enable.pRangeProfilerObject;
  ASSERT_EQ(lib().cuptiRangeProfilerStop(&stop), CUPTI_SUCCESS);
  EXPECT_EQ(stop.isAllPassSubmitted, 1);
  ASSERT_EQ(lib().cuptiRangeProfilerDecodeData(&decode), CUPTI_SUCCESS);
  EXPECT_EQ(decode.numOfRangeDropped, 1u);

  auto info = PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  ASSERT_EQ(lib().cuptiRangeProfilerGetCounterDataInfo(&info), CUPTI_SUCCESS);
  ASSERT_EQ(info.numTotalRanges, 2u);
  const double expected[2][2] = {{64, 0}, {4096, 75}};  // relu, then gemm
  for (size_t range = 0; range < 2; ++range) {
    double values[2] = {-1, -1};
    auto evaluate = PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    evaluate.pHostObject = host.pHostObject;
    evaluate.pCounterDataImage = counter_data.data();
    evaluate.counterDataImageSize = counter_data.size();
    evaluate.rangeIndex = range;
    evaluate.ppMetricNames = metrics;
    evaluate.numMetrics = 2;
    evaluate.pMetricValues = values;
    ASSERT_EQ(lib().cuptiProfilerHostEvaluateToGpuValues(&evaluate), CUPTI_SUCCESS);
    EXPECT_EQ(values[0], expected[range][0]) << "range " << range;
    EXPECT_EQ(values[1], expected[range][1]) << "range " << range;
    evaluate.ppMetricNames = unknown;
    evaluate.numMetrics = 1;
    EXPECT_EQ(lib().cuptiProfilerHostEvaluateToGpuValues(&evaluate), CUPTI_ERROR_INVALID_METRIC_NAME);
  }

  auto disable = PARAMS(CUpti_RangeProfiler_Disable_Params);
  disable.pRangeProfilerObject = enable.pRangeProfilerObject;
  EXPECT_EQ(lib().cuptiRangeProfilerDisable(&disable), CUPTI_SUCCESS);
  EXPECT_EQ(lib().cuptiRangeProfilerDisable(&disable), CUPTI_ERROR_INVALID_PARAMETER);
  auto deinit = PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  deinit.pHostObject = host.pHostObject;
  EXPECT_EQ(lib().cuptiProfilerHostDeinitialize(&deinit), CUPTI_SUCCESS);
}

#undef PARAMS

}  // namespace
