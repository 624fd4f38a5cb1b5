// The CUPTI collector against the CUPTI test double (tests/cupti_double), loaded by path the way
// perfprof loads libcupti: buffer pool exhaustion, decoding, clock, external ids.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "cupti/activity_collector.h"
#include "cupti/activity_decoder.h"
#include "cupti/cupti_library.h"
#include "record/recorder.h"
#include "../cupti_double/fake_cupti_control.h"

// Out of memory on demand: while set on a thread, every allocation of this test binary on that
// thread fails (perfprof's core is linked in statically, so its allocations come here).
thread_local bool t_out_of_memory = false;

void* operator new(std::size_t size) {
  void* memory = t_out_of_memory ? nullptr : std::malloc(size == 0 ? 1 : size);
  if (memory == nullptr) throw std::bad_alloc();
  return memory;
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace perfprof {
namespace {

// The double's control API, resolved by name from the library perfprof loaded.
struct FakeCupti {
  void (*reset)();
  void (*drop_next)(uint32_t);
  void (*set_completion_hooks)(void (*)(), void (*)());
  uint32_t (*launch_kernel)(const char*, uint32_t, uint32_t, uint32_t, uint64_t, uint32_t, uint32_t,
                            uint16_t, int32_t, uint32_t);
  decltype(&::fake_cupti_launch_kernel_at) launch_kernel_at;
  decltype(&::fake_cupti_driver_launch_kernel) driver_launch_kernel;
  decltype(&::fake_cupti_driver_call) driver_call;
  decltype(&::fake_cupti_graph_launch) graph_launch;
  decltype(&::fake_cupti_set_version) set_version;
  decltype(&::fake_cupti_set_in_flight) set_in_flight;
  decltype(&::fake_cupti_set_current_context) set_current_context;
  decltype(&::fake_cupti_other_client_session) other_client_session;
  decltype(&::fake_cupti_external_stack_depth) external_stack_depth;
  decltype(&::fake_cupti_fail) fail;

  static FakeCupti& instance() {
    static FakeCupti fake = [] {
      void* handle = dlopen(PERFPROF_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
      FakeCupti f{};
      // The collector registers its callbacks once per process, as CUPTI keeps them.
      f.reset = reinterpret_cast<void (*)()>(dlsym(handle, "fake_cupti_reset_keeping_callbacks"));
      f.drop_next = reinterpret_cast<void (*)(uint32_t)>(dlsym(handle, "fake_cupti_drop_next"));
      f.set_completion_hooks =
          reinterpret_cast<decltype(f.set_completion_hooks)>(dlsym(handle, "fake_cupti_set_completion_hooks"));
      f.launch_kernel = reinterpret_cast<decltype(f.launch_kernel)>(dlsym(handle, "fake_cupti_launch_kernel"));
#define FAKE_CUPTI_RESOLVE(member, name) f.member = reinterpret_cast<decltype(f.member)>(dlsym(handle, #name))
      FAKE_CUPTI_RESOLVE(launch_kernel_at, fake_cupti_launch_kernel_at);
      FAKE_CUPTI_RESOLVE(driver_launch_kernel, fake_cupti_driver_launch_kernel);
      FAKE_CUPTI_RESOLVE(driver_call, fake_cupti_driver_call);
      FAKE_CUPTI_RESOLVE(graph_launch, fake_cupti_graph_launch);
      FAKE_CUPTI_RESOLVE(set_version, fake_cupti_set_version);
      FAKE_CUPTI_RESOLVE(set_in_flight, fake_cupti_set_in_flight);
      FAKE_CUPTI_RESOLVE(set_current_context, fake_cupti_set_current_context);
      FAKE_CUPTI_RESOLVE(other_client_session, fake_cupti_other_client_session);
      FAKE_CUPTI_RESOLVE(external_stack_depth, fake_cupti_external_stack_depth);
      FAKE_CUPTI_RESOLVE(fail, fake_cupti_fail);
#undef FAKE_CUPTI_RESOLVE
      return f;
    }();
    return fake;
  }

  uint32_t kernel(const char* name, uint32_t stream = 7) {
    return launch_kernel(name, 0, 1, stream, 10'000, 64, 128, 32, 0, 0);
  }
};

class CuptiCollector : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const CuptiStatus& status = CuptiLibrary::instance().load(PERFPROF_FAKE_CUPTI, {}, PERFPROF_FAKE_CUPTI);
    ASSERT_TRUE(status.available) << status.reason;
  }
  void SetUp() override { FakeCupti::instance().reset(); }
  void TearDown() override {
    collector().stop();
    collector().take(false);
  }

  static ActivityCollector& collector() { return ActivityCollector::instance(); }
  static FakeCupti& fake() { return FakeCupti::instance(); }

  // Records a take accounts for: delivered (kernels and their launches) or counted as dropped.
  static size_t accounted(const GpuCollected& collected) {
    return collected.activities.size() + collected.api_calls.size() + collected.dropped_records;
  }

  static CollectorOptions options(size_t max_buffers = 256, GpuLevel level = GpuLevel::Level0) {
    CollectorOptions o;
    o.level = level;
    o.max_buffers = max_buffers;
    o.initial_buffers = std::min<size_t>(o.initial_buffers, max_buffers);
    return o;
  }
};

TEST_F(CuptiCollector, DecodesKernelsAndTheirLaunchesOnTheHostClock) {
  ASSERT_EQ(collector().start(options()), "");
  const int64_t before = now_ns();
  const uint32_t correlation = fake().kernel("gemm");
  const int64_t after = now_ns();
  collector().stop();
  const GpuCollected collected = collector().take(false);

  ASSERT_EQ(collected.activities.size(), 1u);
  const GpuActivity& kernel = collected.activities[0];
  EXPECT_EQ(global_strings().snapshot()[kernel.name], "gemm");
  EXPECT_EQ(kernel.correlation, correlation);
  EXPECT_EQ(kernel.stream, 7u);
  EXPECT_EQ(kernel.grid[0], 64u);
  EXPECT_EQ(kernel.block[0], 128u);
  EXPECT_EQ(kernel.end_ns - kernel.start_ns, 10'000);
  ASSERT_EQ(collected.api_calls.size(), 1u);
  const ApiCall& launch = collected.api_calls[0];
  EXPECT_EQ(global_strings().snapshot()[launch.name], "cudaLaunchKernel");
  EXPECT_GE(launch.start_ns, before);
  EXPECT_LE(launch.end_ns, after);
  EXPECT_GE(kernel.start_ns, launch.end_ns);
  EXPECT_TRUE(collector().uses_host_clock());
}

TEST_F(CuptiCollector, AnExhaustedBufferPoolDropsAndCountsRecords) {
  ASSERT_EQ(collector().start(options(/*max_buffers=*/1)), "");
  // About five 4 MiB buffers' worth. A drop needs the one buffer to be still in use when the
  // double wants the next; at a single switch the double's worker can, rarely under load, hand
  // it back first (seen once in 60 runs), at five switches in a row it practically never does.
  constexpr uint32_t kLaunches = 100'000;
  for (uint32_t i = 0; i < kLaunches; ++i) fake().kernel("k");
  collector().stop();
  const GpuCollected collected = collector().take(false);
  EXPECT_GT(collected.dropped_records, 0u);
  // Each launch is two records (runtime + kernel): everything is delivered or counted.
  EXPECT_EQ(accounted(collected), 2u * kLaunches);
}

// A buffer whose records cannot be decoded for want of memory: none is kept, all are counted.
TEST_F(CuptiCollector, ABufferDecodedOutOfMemoryIsCountedAsDropped) {
  ASSERT_EQ(collector().start(options()), "");
  for (int i = 0; i < 5; ++i) fake().kernel("k");
  fake().set_completion_hooks([] { t_out_of_memory = true; }, [] { t_out_of_memory = false; });
  collector().stop();  // the flush hands over the buffer, decoded without memory
  fake().set_completion_hooks(nullptr, nullptr);
  const GpuCollected collected = collector().take(false);
  EXPECT_EQ(collected.activities.size() + collected.api_calls.size(), 0u);
  EXPECT_EQ(collected.dropped_records, 10u);  // each launch: a runtime and a kernel record
}

TEST_F(CuptiCollector, DropsReportedByCuptiAreCounted) {
  ASSERT_EQ(collector().start(options()), "");
  fake().drop_next(3);
  for (int i = 0; i < 5; ++i) fake().kernel("k");
  collector().stop();
  const GpuCollected collected = collector().take(false);
  EXPECT_EQ(collected.dropped_records, 3u);
  EXPECT_EQ(collected.activities.size() + collected.api_calls.size(), 7u);
}

// CUPTI counts the records it drops apart from any buffer; when no buffer completes after the
// last drops, only a query after the final flush sees them.
TEST_F(CuptiCollector, RecordsDroppedAfterTheLastCompletedBufferAreCounted) {
  ASSERT_EQ(collector().start(options()), "");
  fake().kernel("delivered");
  const GpuCollected first = collector().take(true);  // completes the buffer in use
  fake().drop_next(2);
  fake().kernel("dropped");  // both records dropped: no buffer is requested or completed
  collector().stop();
  const GpuCollected last = collector().take(false);
  EXPECT_EQ(first.activities.size() + first.api_calls.size(), 2u);
  EXPECT_EQ(first.dropped_records + last.dropped_records, 2u);
  EXPECT_EQ(accounted(first) + accounted(last), 4u);
}

// Launching threads exhaust a one-buffer pool over and over while the profiling thread takes
// what was decoded so far, as it does at each step; the double's completion thread, the launching
// threads and the flushing thread then race on the buffer and on the drop count. Every record of every
// session must come back in one of its takes, delivered or counted as dropped, whatever the
// interleaving (launch counts are random, so sessions end at every point of a buffer's cycle).
TEST_F(CuptiCollector, EveryRecordIsDeliveredOrCountedUnderCompetingThreads) {
  CollectorOptions one_small_buffer = options(/*max_buffers=*/1);
  one_small_buffer.buffer_bytes = 64 << 10;  // ~220 launches
  constexpr int kSessions = 200;
  constexpr int kLaunchers = 2;
  constexpr int kTakesPerSession = 3;
  std::mt19937 random(20240613);
  std::uniform_int_distribution<uint32_t> launch_count(1, 700);
  size_t delivered = 0;
  size_t dropped = 0;
  for (int session = 0; session < kSessions; ++session) {
    ASSERT_EQ(collector().start(one_small_buffer), "");
    uint32_t launches = 0;
    std::vector<std::thread> launchers;
    for (int t = 0; t < kLaunchers; ++t) {
      const uint32_t count = launch_count(random);
      launches += count;
      launchers.emplace_back([count] {
        for (uint32_t i = 0; i < count; ++i) fake().kernel("k");
      });
    }
    std::vector<GpuCollected> takes;
    for (int i = 0; i < kTakesPerSession; ++i) takes.push_back(collector().take(true));
    for (std::thread& launcher : launchers) launcher.join();
    collector().stop();
    takes.push_back(collector().take(false));

    size_t session_records = 0;
    for (const GpuCollected& taken : takes) {
      session_records += accounted(taken);
      delivered += taken.activities.size() + taken.api_calls.size();
      dropped += taken.dropped_records;
    }
    ASSERT_EQ(session_records, 2u * launches) << "session " << session << ": " << launches << " launches";
  }
  // Both ways a record comes back were taken (the pool was exhausted and refilled).
  EXPECT_GT(delivered, 0u);
  EXPECT_GT(dropped, 0u);
}

TEST_F(CuptiCollector, HostRangesBecomeExternalIdsOfTheWorkLaunchedInside) {
  ASSERT_EQ(collector().start(options()), "");
  ActivityCollector::push_host_range(41);
  fake().kernel("outer");
  ActivityCollector::push_host_range(42);
  const uint32_t inner = fake().kernel("inner");
  ActivityCollector::pop_host_range(42);
  ActivityCollector::pop_host_range(41);
  const uint32_t outside = fake().kernel("outside");
  collector().stop();
  const GpuCollected collected = collector().take(false);
  EXPECT_EQ(collected.external_ids.at(inner), 42u);
  EXPECT_EQ(collected.external_ids.count(outside), 0u);
  EXPECT_EQ(collected.external_ids.size(), 2u);
}

// Issue 33 point 2: enabling GRAPH_TRACE selects graph-level tracing for good, and the kernels of
// CUDA graphs vanished at Level1 and Level2 and in every later session. Each node is a kernel
// row linked to the graph launch by its correlation id, with its graph id, at every level.
TEST_F(CuptiCollector, EveryNodeOfACudaGraphIsAKernelAtEveryLevel) {
  for (GpuLevel level : {GpuLevel::Level2, GpuLevel::Level1, GpuLevel::Level0}) {
    ASSERT_EQ(collector().start(options(256, level)), "");
    const uint32_t launch = fake().graph_launch(0, 1, 7, /*graph_id=*/5, /*nodes=*/3, 4'000);
    collector().stop();
    const GpuCollected collected = collector().take(false);
    std::vector<std::string> kernels;
    for (const GpuActivity& activity : collected.activities) {
      if (activity.kind != GpuActivityKind::Kernel) continue;
      kernels.push_back(global_strings().snapshot()[activity.name]);
      EXPECT_EQ(activity.correlation, launch);
      EXPECT_EQ(activity.graph_id, 5u);
    }
    EXPECT_EQ(kernels, (std::vector<std::string>{"graph 5 node 1", "graph 5 node 2", "graph 5 node 3"}))
        << "level " << static_cast<int>(level);
  }
}

// Point 6: a kernel launched through the driver alone (Triton's cuLaunchKernel) has its launch
// row at Level0; other driver calls are kept from Level1 on only.
TEST_F(CuptiCollector, KernelsLaunchedThroughTheDriverHaveTheirLaunchAtLevel0) {
  ASSERT_EQ(collector().start(options()), "");
  const uint32_t launch = fake().driver_launch_kernel("triton_poi_fused_add_0", 0, 1, 7, 3'000);
  fake().driver_call(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 300);
  collector().stop();
  const GpuCollected collected = collector().take(false);
  ASSERT_EQ(collected.activities.size(), 1u);
  EXPECT_EQ(collected.activities[0].correlation, launch);
  ASSERT_EQ(collected.api_calls.size(), 1u);
  EXPECT_TRUE(collected.api_calls[0].driver);
  EXPECT_EQ(collected.api_calls[0].correlation, launch);
  EXPECT_EQ(global_strings().snapshot()[collected.api_calls[0].name], "cuLaunchKernel");

  ASSERT_EQ(collector().start(options(256, GpuLevel::Level1)), "");
  fake().driver_call(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 300);
  collector().stop();
  EXPECT_EQ(collector().take(false).api_calls.size(), 1u);
}

// Point 9: a range that pushed no id (begun while not collecting, or an mstx range that ends
// before the ranges begun in it) must not pop the id of another: it took the enclosing range's,
// and the work launched next lost its External id.
TEST_F(CuptiCollector, ARangeEndPopsOnlyTheIdItPushed) {
  ActivityCollector::push_host_range(40);  // not collecting: not pushed
  ASSERT_EQ(collector().start(options()), "");
  ActivityCollector::push_host_range(41);
  ActivityCollector::pop_host_range(40);
  const uint32_t inside = fake().kernel("inside 41");
  ActivityCollector::pop_host_range(41);
  EXPECT_EQ(fake().external_stack_depth(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0), 0);
  // An id still pushed when the session stops is popped: the next session's work never gets it.
  ActivityCollector::push_host_range(42);
  collector().stop();
  EXPECT_EQ(fake().external_stack_depth(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0), 0);
  const GpuCollected collected = collector().take(false);
  EXPECT_EQ(collected.external_ids.at(inside), 41u);
}

// Point 5: CUPTI before API version 27 (CUDA 12.9) can crash on a declined buffer request (the
// double aborts): past the pool's limit it gets a buffer anyway, and nothing is dropped.
TEST_F(CuptiCollector, ABufferIsNeverRefusedBeforeApiVersion27) {
  fake().set_version(26);
  ASSERT_EQ(collector().start(options(/*max_buffers=*/1)), "");
  constexpr uint32_t kLaunches = 60'000;  // several 4 MiB buffers, handed over one after another
  for (uint32_t i = 0; i < kLaunches; ++i) fake().kernel("k");
  collector().stop();
  const GpuCollected collected = collector().take(false);
  EXPECT_EQ(collected.dropped_records, 0u);
  EXPECT_EQ(collected.activities.size() + collected.api_calls.size(), 2u * kLaunches);
}

// Point 8: with several CUPTI subscribers (CUDA 13.4+) cuptiSetThreadIdType is refused and CUPTI
// reports pthread ids, which match no host track: said, not ignored.
TEST_F(CuptiCollector, ThreadIdsCuptiCannotReportAreSaid) {
  fake().fail("cuptiSetThreadIdType", CUPTI_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(collector().start(options()), "");
  ASSERT_EQ(collector().notes().size(), 1u);
  EXPECT_NE(collector().notes()[0].find("cuptiSetThreadIdType: CUPTI_ERROR_NOT_SUPPORTED"), std::string::npos)
      << collector().notes()[0];
  fake().fail("cuptiSetThreadIdType", 0);
}

// Point 3: a forced flush hands over records of work still running as they are, and CUPTI's
// reader stops at the first: stop waits for the work when it can, and counts what it cannot.
TEST_F(CuptiCollector, WorkStillRunningAtStopIsWaitedForOrCounted) {
  ASSERT_EQ(collector().start(options()), "");
  fake().kernel("done");
  fake().set_in_flight(1);
  fake().kernel("running");
  fake().kernel("queued after it");
  EXPECT_FALSE(collector().synchronize()) << "no CUDA context is current";
  EXPECT_EQ(collector().stop().incomplete_buffers, 1u);
  std::vector<std::string> kernels;
  for (const GpuActivity& a : collector().take(false).activities) kernels.push_back(global_strings().snapshot()[a.name]);
  EXPECT_EQ(kernels, std::vector<std::string>{"done"});

  fake().set_current_context(1, 0);
  ASSERT_EQ(collector().start(options()), "");
  fake().set_in_flight(1);
  fake().kernel("running");
  fake().kernel("queued after it");
  EXPECT_TRUE(collector().synchronize());
  const StopReport report = collector().stop();
  fake().set_current_context(0, 0);
  EXPECT_EQ(report.incomplete_buffers, 0u);
  EXPECT_EQ(collector().take(false).activities.size(), 2u);
}

// Point 1: another CUPTI client (torch.profiler's Kineto) registers its own buffer and timestamp
// callbacks, or finalizes CUPTI, between two of perfprof's sessions; perfprof's next session got
// no records (or records on the other clock). Each session has its kernels, on the host clock.
TEST_F(CuptiCollector, AnotherClientBetweenSessionsTakesNothingFromTheNext) {
  for (const int finalize : {0, 1}) {
    fake().other_client_session(finalize);
    ASSERT_EQ(collector().start(options()), "");
    const int64_t before = now_ns();
    fake().kernel("after the other client");
    collector().stop();
    const int64_t after = now_ns();
    const GpuCollected collected = collector().take(false);
    ASSERT_EQ(collected.activities.size(), 1u) << "finalize " << finalize;
    ASSERT_EQ(collected.api_calls.size(), 1u);
    const ApiCall& launch = collected.api_calls[0];
    EXPECT_GE(launch.start_ns, before);
    EXPECT_LE(launch.end_ns, after);
    // On the host clock as its launch: the other client's, CLOCK_REALTIME, is decades away.
    EXPECT_EQ(collected.activities[0].start_ns - launch.end_ns, 1'000) << "the double's launch latency";
  }
}

// Point 7: CUPTI 12.x writes older, shorter records (Kernel9, Memcpy5, Memset4, Device5,
// Synchronization, Memory3); the fields perfprof reads are where it reads them.
TEST_F(CuptiCollector, RecordsOfCupti12xAreDecodedAlike) {
  fake().set_version(22);  // CUDA 12.4
  ASSERT_EQ(collector().start(options(256, GpuLevel::Level1)), "");
  const uint32_t kernel = fake().launch_kernel("k12", 0, 1, 7, 10'000, 64, 128, 40, 512, 256);
  const uint32_t launch = fake().graph_launch(0, 1, 9, 4, 1, 2'000);
  collector().stop();
  const GpuCollected collected = collector().take(false);
  ASSERT_EQ(collected.activities.size(), 2u);
  const GpuActivity& k = collected.activities[0];
  EXPECT_EQ(k.correlation, kernel);
  EXPECT_EQ(k.end_ns - k.start_ns, 10'000);
  EXPECT_EQ(k.grid[0], 64u);
  EXPECT_EQ(k.block[0], 128u);
  EXPECT_EQ(k.registers_per_thread, 40u);
  EXPECT_EQ(k.static_shared_memory, 512);
  EXPECT_EQ(k.dynamic_shared_memory, 256u);
  EXPECT_EQ(k.graph_id, 0u);
  EXPECT_EQ(collected.activities[1].correlation, launch);
  EXPECT_EQ(collected.activities[1].graph_id, 4u);
  EXPECT_EQ(collected.api_calls.size(), 2u);
}

// Point 1, during a session: another client registering its callbacks is handed the buffers
// CUPTI holds, with perfprof's records. Nobody can give them back, but stop says so (the
// records vanished silently), and the next session has its records again.
TEST_F(CuptiCollector, AnotherClientTakingCuptiOverDuringASessionIsSaid) {
  ASSERT_EQ(collector().start(options()), "");
  fake().kernel("before the other client");
  fake().other_client_session(/*finalize=*/0);
  const StopReport report = collector().stop();
  EXPECT_EQ(report.flush_error, "");
  EXPECT_EQ(report.buffers_taken, 1u);
  EXPECT_EQ(collector().take(false).activities.size(), 0u);

  ASSERT_EQ(collector().start(options()), "");
  fake().kernel("next session");
  EXPECT_EQ(collector().stop().buffers_taken, 0u);
  EXPECT_EQ(collector().take(false).activities.size(), 1u);
}

TEST_F(CuptiCollector, DiscardDropsWhatWasCollectedSoFar) {
  ASSERT_EQ(collector().start(options()), "");
  fake().kernel("warm-up");
  fake().drop_next(2);
  fake().kernel("dropped in warm-up");
  collector().discard();
  fake().kernel("recorded");
  collector().stop();
  const GpuCollected collected = collector().take(false);
  ASSERT_EQ(collected.activities.size(), 1u);
  EXPECT_EQ(global_strings().snapshot()[collected.activities[0].name], "recorded");
  EXPECT_EQ(collected.dropped_records, 0u) << "the warm-up's drops went with the warm-up";
}

TEST_F(CuptiCollector, KindsLeftOutAreNotEnabled) {
  CollectorOptions launches_only = options();
  launches_only.left_out = {"kernel"};  // torch.profiler's filter without CONCURRENT_KERNEL
  ASSERT_EQ(collector().start(launches_only), "");
  const uint32_t correlation = fake().kernel("gemm");
  collector().stop();
  const GpuCollected collected = collector().take(false);
  EXPECT_TRUE(collected.activities.empty());
  ASSERT_EQ(collected.api_calls.size(), 1u);
  EXPECT_EQ(collected.api_calls[0].correlation, correlation);
}

}  // namespace
}  // namespace perfprof

namespace perfprof {
namespace {

CUptiResult CUPTIAPI current_sizes(CUpti_ActivityKind kind, uint32_t, size_t* size) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: *size = sizeof(CUpti_ActivityKernel13); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: *size = sizeof(CUpti_ActivityMemcpy7); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: *size = sizeof(CUpti_ActivityMemset5); break;
    default: *size = sizeof(CUpti_ActivityDevice6);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI short_kernel_records(CUpti_ActivityKind kind, uint32_t version, size_t* size) {
  current_sizes(kind, version, size);
  if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) *size = 64;  // an unknown, shorter layout
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI short_synchronization_records(CUpti_ActivityKind kind, uint32_t version, size_t* size) {
  current_sizes(kind, version, size);
  if (kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) *size = 24;  // ends before streamId
  return CUPTI_SUCCESS;
}

TEST(ActivityDecoderLayout, KnownLayoutsAreAcceptedAndShorterOnesRefusedWithTheReason) {
  EXPECT_EQ(ActivityDecoder::layout_problem(nullptr), "") << "older CUPTI: compile-time checks apply";
  EXPECT_EQ(ActivityDecoder::layout_problem(current_sizes), "");
  const std::string problem = ActivityDecoder::layout_problem(short_kernel_records);
  EXPECT_NE(problem.find("kernel records of 64 bytes"), std::string::npos) << problem;
  // Issue 33 point 7: every kind read is checked, not the first four only.
  const std::string synchronization = ActivityDecoder::layout_problem(short_synchronization_records);
  EXPECT_NE(synchronization.find("synchronization records of 24 bytes"), std::string::npos) << synchronization;
}

}  // namespace
}  // namespace perfprof
