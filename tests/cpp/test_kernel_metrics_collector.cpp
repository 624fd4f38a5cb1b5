// Per-kernel GPU metrics of a session (cupti/kernel_metrics_collector.h) against the CUPTI test
// double, which also stands in for the CUDA driver (current context, synchronisation): windows
// measured on the current context, and their values given to kernel records in launch order,
// or to none when the records and CUPTI's ranges do not pair one to one.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fake_cupti_controls.h"
#include "common/clock.h"
#include "cupti/cupti_library.h"
#include "cupti/kernel_metrics_collector.h"

namespace perfprof {
namespace {

using test_double::fake;

constexpr uint32_t kContextId = 3;
constexpr uint32_t kDevice = 0;
const char* const kChip = "GH100";

// A kernel launch as the activity collector would hand it over: the kernel's record and the
// record of the call that launched it, which began at `call_ns`.
struct Launches {
  GpuCollected gpu;
  uint32_t next_correlation = 100;

  uint32_t add(int64_t call_ns, uint32_t context = kContextId, int64_t kernel_start_ns = 0) {
    const uint32_t correlation = next_correlation++;
    add_kernel(correlation, call_ns, context, kernel_start_ns);
    ApiCall call;
    call.correlation = correlation;
    call.start_ns = call_ns;
    call.end_ns = call_ns + 1'000;
    gpu.api_calls.push_back(call);
    return correlation;
  }
  // Another kernel of an earlier launch (a CUDA graph's kernels share its correlation id).
  void add_kernel(uint32_t correlation, int64_t call_ns, uint32_t context = kContextId, int64_t start_ns = 0) {
    GpuActivity kernel;
    kernel.kind = GpuActivityKind::Kernel;
    kernel.context = context;
    kernel.device = kDevice;
    kernel.correlation = correlation;
    kernel.start_ns = start_ns != 0 ? start_ns : call_ns + 5'000;
    kernel.end_ns = kernel.start_ns + 1'000;
    gpu.activities.push_back(kernel);
  }
};

class KernelMetricsCollectorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test_double::load_as_cupti(), ""); }
  void SetUp() override {
    fake().fake_cupti_reset_keeping_callbacks();
    fake().fake_cupti_set_device_chip(kDevice, kChip);
    for (const char* base : {"dram__bytes_read", "dram__bytes_write", "dram__throughput"}) {
      fake().fake_cupti_add_chip_metric(kChip, CUPTI_METRIC_TYPE_COUNTER, base);
    }
    fake().fake_cupti_set_current_context(kContextId, kDevice);
    configure(GpuMetricGroup::Memory);
  }
  void TearDown() override {
    collector().take({});  // releases the session
    configure(GpuMetricGroup::None);
    fake().fake_cupti_set_current_context(0, 0);
    fake().fake_cupti_reset_keeping_callbacks();
  }

  static KernelMetricsCollector& collector() { return KernelMetricsCollector::instance(); }
  static void configure(GpuMetricGroup group, size_t max_kernels = 16) {
    KernelMetricsOptions options;
    options.group = group;
    options.max_kernels = max_kernels;
    collector().configure(options);
  }
  static void set_dram(const char* kernel, double read, double write) {
    fake().fake_cupti_set_kernel_metric(kernel, "dram__bytes_read.sum", read);
    fake().fake_cupti_set_kernel_metric(kernel, "dram__bytes_write.sum", write);
  }
  static void launch(const char* kernel, uint32_t context = kContextId) {
    fake().fake_cupti_launch_kernel(kernel, kDevice, context, /*stream=*/7, 5'000, 64, 128, 32, 0, 0);
  }
};

// The values measured for the kernel of `correlation` (the double measures 0 for a metric never
// set), or none.
std::vector<double> values_of(const KernelMetricsInput& input, uint32_t correlation) {
  for (const KernelMetricRow& row : input.kernels) {
    if (row.correlation == correlation) return row.values;
  }
  return {};
}

TEST_F(KernelMetricsCollectorTest, KernelsLaunchedInTheWindowGetTheirValuesInLaunchOrder) {
  set_dram("gemm", 4096, 1024);
  set_dram("softmax", 512, 256);
  Launches records;
  const uint32_t before = records.add(now_ns());  // launched before the window: not measured

  ASSERT_EQ(collector().begin_window(), "");
  const uint32_t gemm = records.add(now_ns());
  launch("gemm");
  records.add(now_ns(), kContextId + 1);  // another context's kernel: not this window's
  launch("gemm", kContextId + 1);
  const uint32_t softmax = records.add(now_ns());
  launch("softmax");
  const uint64_t synchronizations = fake().fake_cupti_context_synchronizations();
  ASSERT_EQ(collector().end_window(), "");
  EXPECT_EQ(fake().fake_cupti_context_synchronizations(), synchronizations + 1);  // waited for the kernels
  records.add(now_ns());  // after the window

  const KernelMetricsInput input = collector().take(records.gpu);
  EXPECT_EQ(input.columns,
            (std::vector<std::string>{"DRAM Read (bytes)", "DRAM Write (bytes)", "DRAM Throughput (%)"}));
  EXPECT_EQ(input.kernels_left_out, 0u);
  EXPECT_EQ(input.kernels_unmatched, 0u);
  ASSERT_EQ(input.kernels.size(), 2u);
  EXPECT_EQ(values_of(input, gemm), (std::vector<double>{4096, 1024, 0}));
  EXPECT_EQ(values_of(input, softmax), (std::vector<double>{512, 256, 0}));
  EXPECT_TRUE(values_of(input, before).empty());
  // The session is released with the take: nothing of CUPTI's stays alive between cycles.
  size_t range_profilers = 99;
  fake().fake_cupti_profiler_objects(nullptr, nullptr, &range_profilers);
  EXPECT_EQ(range_profilers, 0u);
}

TEST_F(KernelMetricsCollectorTest, KernelsOfOneLaunchPairInTheOrderTheyRan) {
  set_dram("graph_a", 1, 0);
  set_dram("graph_b", 2, 0);
  Launches records;
  ASSERT_EQ(collector().begin_window(), "");
  const int64_t call = now_ns();
  const uint32_t graph = records.add(call, kContextId, call + 9'000);  // ran second
  records.add_kernel(graph, call, kContextId, call + 2'000);           // ran first
  launch("graph_a");
  launch("graph_b");
  ASSERT_EQ(collector().end_window(), "");
  const KernelMetricsInput input = collector().take(records.gpu);
  ASSERT_EQ(input.kernels.size(), 2u);
  for (const KernelMetricRow& row : input.kernels) {
    EXPECT_EQ(row.values[0], row.start_ns == call + 2'000 ? 1 : 2) << row.start_ns;
  }
}

TEST_F(KernelMetricsCollectorTest, RecordsThatDoNotPairOneToOneGetNoValuesAndAreCounted) {
  set_dram("gemm", 4096, 1024);
  Launches records;
  ASSERT_EQ(collector().begin_window(), "");
  records.add(now_ns());
  launch("gemm");
  launch("gemm");  // measured, but its record is missing (lost, or launched unseen)
  ASSERT_EQ(collector().end_window(), "");
  const KernelMetricsInput input = collector().take(records.gpu);
  EXPECT_TRUE(input.kernels.empty());
  EXPECT_EQ(input.kernels_unmatched, 2u);
  EXPECT_EQ(input.columns.size(), 3u);
}

TEST_F(KernelMetricsCollectorTest, KernelsPastCapacityAreCountedAndTheRestStillPair) {
  configure(GpuMetricGroup::Memory, /*max_kernels=*/2);
  set_dram("gemm", 8, 4);
  Launches records;
  ASSERT_EQ(collector().begin_window(), "");
  std::vector<uint32_t> correlations;
  for (int i = 0; i < 3; ++i) {
    correlations.push_back(records.add(now_ns()));
    launch("gemm");
  }
  ASSERT_EQ(collector().end_window(), "");
  EXPECT_EQ(collector().kernels_left_out(), 1u);
  const KernelMetricsInput input = collector().take(records.gpu);
  EXPECT_EQ(input.kernels_left_out, 1u);
  ASSERT_EQ(input.kernels.size(), 2u);
  EXPECT_EQ(input.kernels[0].correlation, correlations[0]);
  EXPECT_EQ(input.kernels[1].correlation, correlations[1]);
}

TEST_F(KernelMetricsCollectorTest, WithoutACurrentContextTheWindowSaysWhyAndNothingIsMeasured) {
  fake().fake_cupti_set_current_context(0, 0);
  const std::string error = collector().begin_window();
  EXPECT_NE(error.find("no CUDA context is current"), std::string::npos) << error;
  EXPECT_EQ(collector().end_window(), "");
  const KernelMetricsInput input = collector().take({});
  EXPECT_TRUE(input.columns.empty());
  EXPECT_TRUE(input.kernels.empty());
}

TEST_F(KernelMetricsCollectorTest, AMetricTheChipLacksIsNamed) {
  fake().fake_cupti_reset_keeping_callbacks();
  fake().fake_cupti_set_device_chip(kDevice, kChip);
  fake().fake_cupti_add_chip_metric(kChip, CUPTI_METRIC_TYPE_COUNTER, "dram__bytes_read");
  const std::string error = collector().begin_window();
  EXPECT_NE(error.find("dram__bytes_write"), std::string::npos) << error;
  EXPECT_TRUE(collector().take({}).columns.empty());
}

TEST_F(KernelMetricsCollectorTest, NothingAskedMeansNothingMeasured) {
  configure(GpuMetricGroup::None);
  EXPECT_FALSE(collector().configured());
  EXPECT_EQ(collector().begin_window(), "");
  launch("gemm");
  EXPECT_EQ(collector().end_window(), "");
  EXPECT_TRUE(collector().take({}).columns.empty());
  size_t range_profilers = 99;
  fake().fake_cupti_profiler_objects(nullptr, nullptr, &range_profilers);
  EXPECT_EQ(range_profilers, 0u);
}

}  // namespace
}  // namespace perfprof
