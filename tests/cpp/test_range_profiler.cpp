// Per-kernel GPU metrics: the metric groups' mapping (cupti/gpu_metric_sets.h), and the Range
// Profiler session (cupti/range_profiler.h) against the CUPTI test double, loaded by path the way
// perfprof loads libcupti. The double implements the Range Profiler and Profiler Host APIs from
// their headers; what real CUPTI does on a GPU is for tests/gpu (docs/gpu_metrics.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fake_cupti_controls.h"
#include "cupti/cupti_library.h"
#include "cupti/gpu_metric_sets.h"
#include "cupti/range_profiler.h"

namespace perfprof {
namespace {

// --- The mapping ---------------------------------------------------------------------------------

TEST(GpuMetricSets, GroupsAreNamedAsThePythonEnum) {
  const std::vector<std::string> python = {"GpuMetricsNone", "PipeUtilization", "ArithmeticUtilization",
                                           "Memory",         "L2Cache",         "MemoryAccess",
                                           "Occupancy"};
  ASSERT_EQ(std::size(kGpuMetricGroups), python.size());
  for (size_t i = 0; i < python.size(); ++i) {
    EXPECT_EQ(gpu_metric_group_name(kGpuMetricGroups[i]), python[i]);
    EXPECT_EQ(gpu_metric_group_from_name(python[i]), kGpuMetricGroups[i]);
  }
  EXPECT_FALSE(gpu_metric_group_from_name("AicMetrics"));
}

TEST(GpuMetricSets, EveryGroupButNoneHasNamedColumnsOfMetrics) {
  EXPECT_TRUE(gpu_metric_columns(GpuMetricGroup::None).empty());
  for (const GpuMetricGroup group : kGpuMetricGroups) {
    if (group == GpuMetricGroup::None) continue;
    std::set<std::string> names;
    for (const GpuMetricColumn& column : gpu_metric_columns(group)) {
      EXPECT_TRUE(names.insert(column.name).second) << column.name;
      EXPECT_STRNE(column.description, "");
      ASSERT_FALSE(column.terms.empty()) << column.name;
      for (const GpuMetricTerm& term : column.terms) {
        const std::string metric = term.metric;
        EXPECT_NE(metric.find("__"), std::string::npos) << metric;  // unit__counter naming
        EXPECT_LT(base_metric(metric).size(), metric.size()) << metric;  // has a rollup
      }
    }
    EXPECT_FALSE(names.empty()) << gpu_metric_group_name(group);
  }
}

TEST(GpuMetricSets, BaseMetricIsTheNameBeforeItsFirstDot) {
  EXPECT_EQ(base_metric("sm__throughput.avg.pct_of_peak_sustained_elapsed"), "sm__throughput");
  EXPECT_EQ(base_metric("lts__t_sector_hit_rate.pct"), "lts__t_sector_hit_rate");
  EXPECT_EQ(base_metric("no_rollup"), "no_rollup");
}

TEST(GpuMetricSets, FlopsCountAnFmaAsTwoOperations) {
  const GpuMetricPlan plan(GpuMetricGroup::ArithmeticUtilization, false);
  ASSERT_EQ(plan.metrics().size(), 9u);
  ASSERT_EQ(plan.columns().size(), 3u);
  std::vector<double> values(plan.metrics().size(), 0.0);
  auto set = [&](const char* metric, double value) {
    const auto& m = plan.metrics();
    values[static_cast<size_t>(std::find(m.begin(), m.end(), metric) - m.begin())] = value;
  };
  set("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 10);
  set("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 20);
  set("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 30);
  set("smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 4);
  const std::vector<double> columns = plan.column_values(values);
  EXPECT_STREQ(plan.columns()[1]->name, "FP32 FLOPs");
  EXPECT_EQ(columns, (std::vector<double>{0, 10 + 20 + 2 * 30, 2 * 4}));
}

TEST(GpuMetricSets, L2CacheAddsTheHitRateOnce) {
  const GpuMetricPlan memory(GpuMetricGroup::Memory, true);
  ASSERT_EQ(memory.columns().size(), gpu_metric_columns(GpuMetricGroup::Memory).size() + 1);
  EXPECT_EQ(memory.columns().back(), &l2_hit_rate_column());
  EXPECT_EQ(memory.metrics().back(), "lts__t_sector_hit_rate.pct");

  const GpuMetricPlan l2(GpuMetricGroup::L2Cache, true);
  EXPECT_EQ(l2.columns().size(), gpu_metric_columns(GpuMetricGroup::L2Cache).size());
  EXPECT_EQ(std::count(l2.metrics().begin(), l2.metrics().end(), "lts__t_sector_hit_rate.pct"), 1);

  EXPECT_EQ(GpuMetricPlan(GpuMetricGroup::None, true).metrics(),
            std::vector<std::string>{"lts__t_sector_hit_rate.pct"});
  EXPECT_TRUE(GpuMetricPlan(GpuMetricGroup::None, false).metrics().empty());
}

TEST(GpuMetricSets, AColumnWithoutItsValueIsNan) {
  const GpuMetricPlan plan(GpuMetricGroup::Memory, false);
  const std::vector<double> columns = plan.column_values({1.0});
  ASSERT_EQ(columns.size(), 3u);
  EXPECT_EQ(columns[0], 1.0);
  EXPECT_TRUE(std::isnan(columns[1]));
  EXPECT_TRUE(std::isnan(columns[2]));
}

// --- The session, on the double ------------------------------------------------------------------

using test_double::fake;

constexpr uint32_t kContextId = 3;
constexpr int kDevice = 0;
const char* const kChip = "GH100";

CUcontext context_of(uint32_t id) { return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(id)); }

void launch(const char* kernel, uint32_t context = kContextId) {
  fake().fake_cupti_launch_kernel(kernel, kDevice, context, /*stream=*/7, 5'000, 64, 128, 32, 0, 0);
}

// Memory's metrics, one of each type CUPTI lists base metrics under.
const std::vector<std::string> kMetrics = {"dram__bytes_read.sum", "dram__bytes_write.sum",
                                           "dram__throughput.avg.pct_of_peak_sustained_elapsed"};

struct ObjectsAlive {
  int initialized = -1;
  size_t hosts = 99;
  size_t range_profilers = 99;
};

ObjectsAlive objects_alive() {
  ObjectsAlive alive;
  fake().fake_cupti_profiler_objects(&alive.initialized, &alive.hosts, &alive.range_profilers);
  return alive;
}

class RangeProfiler : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test_double::load_as_cupti(), ""); }
  // The activity collector's tests share the double: its callbacks stay registered.
  void SetUp() override {
    fake().fake_cupti_reset_keeping_callbacks();
    fake().fake_cupti_set_device_chip(kDevice, kChip);
    add_metric(CUPTI_METRIC_TYPE_COUNTER, "dram__bytes_read");
    add_metric(CUPTI_METRIC_TYPE_COUNTER, "dram__bytes_write");
    add_metric(CUPTI_METRIC_TYPE_THROUGHPUT, "dram__throughput");
  }
  void TearDown() override { fake().fake_cupti_reset_keeping_callbacks(); }

  static void add_metric(CUpti_MetricType type, const char* base) {
    fake().fake_cupti_add_chip_metric(kChip, type, base);
  }
  static void set_values(const char* kernel, double read, double write, double throughput) {
    fake().fake_cupti_set_kernel_metric(kernel, kMetrics[0].c_str(), read);
    fake().fake_cupti_set_kernel_metric(kernel, kMetrics[1].c_str(), write);
    fake().fake_cupti_set_kernel_metric(kernel, kMetrics[2].c_str(), throughput);
  }
  static std::unique_ptr<KernelMetricsSession> open(std::string& error, size_t max_kernels = 16,
                                                    uint32_t context = kContextId) {
    return KernelMetricsSession::open(context_of(context), kDevice, kMetrics, max_kernels, error);
  }
};

TEST_F(RangeProfiler, MeasuresEachKernelOfItsContextInLaunchOrder) {
  set_values("gemm", 4096, 1024, 80.5);
  set_values("softmax", 512, 512, 12.25);
  std::string error;
  const auto session = open(error);
  ASSERT_TRUE(session) << error;
  EXPECT_EQ(session->chip(), kChip);
  EXPECT_EQ(session->metrics(), kMetrics);
  EXPECT_EQ(session->passes(), 1u);

  ASSERT_EQ(session->start(), "");
  launch("gemm");
  launch("softmax");
  launch("gemm", /*context=*/kContextId + 1);  // another context: not this session's
  launch("gemm");
  ASSERT_EQ(session->stop(), "");
  launch("softmax");  // after the window
  const KernelMetrics& collected = session->collect();

  EXPECT_EQ(collected.error, "");
  EXPECT_EQ(collected.kernels_left_out, 0u);
  ASSERT_EQ(collected.kernels.size(), 3u);
  const std::vector<std::vector<double>> expected = {
      {4096, 1024, 80.5}, {512, 512, 12.25}, {4096, 1024, 80.5}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(collected.kernels[i].range_index, i);
    EXPECT_EQ(collected.kernels[i].values, expected[i]) << "kernel " << i;
  }
  // Auto ranges, no replay for one pass, room for max_kernels per pass.
  int range = 0, replay = 0;
  size_t per_pass = 0;
  fake().fake_cupti_last_range_config(&range, &replay, &per_pass);
  EXPECT_EQ(range, CUPTI_AutoRange);
  EXPECT_EQ(replay, CUPTI_UserReplay);
  EXPECT_EQ(per_pass, 16u);
}

TEST_F(RangeProfiler, MetricsNeedingSeveralPassesReplayEachKernel) {
  fake().fake_cupti_set_metrics_per_pass(2);
  set_values("gemm", 1, 2, 3);
  std::string error;
  const auto session = open(error);
  ASSERT_TRUE(session) << error;
  EXPECT_EQ(session->passes(), 2u);
  ASSERT_EQ(session->start(), "");
  launch("gemm");
  const KernelMetrics& collected = session->collect();  // stops first
  ASSERT_EQ(collected.kernels.size(), 1u) << collected.error;
  EXPECT_EQ(collected.kernels[0].values, (std::vector<double>{1, 2, 3}));
  int replay = 0;
  fake().fake_cupti_last_range_config(nullptr, &replay, nullptr);
  EXPECT_EQ(replay, CUPTI_KernelReplay);
}

TEST_F(RangeProfiler, KernelsPastMaxKernelsAreCountedNotLost) {
  std::string error;
  const auto session = open(error, /*max_kernels=*/2);
  ASSERT_TRUE(session) << error;
  ASSERT_EQ(session->start(), "");
  for (int i = 0; i < 5; ++i) launch("gemm");
  const KernelMetrics& collected = session->collect();
  EXPECT_EQ(collected.error, "");
  EXPECT_EQ(collected.kernels.size(), 2u);
  EXPECT_EQ(collected.kernels_left_out, 3u);
}

TEST_F(RangeProfiler, EachStartBeginsAnEmptyWindow) {
  std::string error;
  const auto session = open(error);
  ASSERT_TRUE(session) << error;
  ASSERT_EQ(session->start(), "");
  launch("gemm");
  launch("gemm");
  EXPECT_EQ(session->collect().kernels.size(), 2u);

  set_values("softmax", 7, 8, 9);
  ASSERT_EQ(session->start(), "");
  launch("softmax");
  const KernelMetrics& second = session->collect();
  ASSERT_EQ(second.kernels.size(), 1u);
  EXPECT_EQ(second.kernels[0].range_index, 0u);
  EXPECT_EQ(second.kernels[0].values, (std::vector<double>{7, 8, 9}));
}

TEST_F(RangeProfiler, StopAndCollectTwiceAreHarmless) {
  std::string error;
  const auto session = open(error);
  ASSERT_TRUE(session) << error;
  EXPECT_EQ(session->stop(), "") << "stop before any start";
  EXPECT_TRUE(session->collect().kernels.empty()) << "collect before any start";
  ASSERT_EQ(session->start(), "");
  EXPECT_EQ(session->start(), "") << "start while started";
  set_values("gemm", 1, 2, 3);
  launch("gemm");
  EXPECT_EQ(session->stop(), "");
  EXPECT_EQ(session->stop(), "");
  const KernelMetrics first = session->collect();
  const KernelMetrics& again = session->collect();
  EXPECT_EQ(again.error, "");
  ASSERT_EQ(again.kernels.size(), 1u);
  EXPECT_EQ(again.kernels[0].values, first.kernels[0].values);
}

TEST_F(RangeProfiler, AMetricTheChipLacksIsNamed) {
  const std::vector<std::string> metrics = {"dram__bytes_read.sum",
                                            "sm__warps_active.avg.pct_of_peak_sustained_active",
                                            "lts__t_sector_hit_rate.pct"};
  std::string error;
  EXPECT_FALSE(KernelMetricsSession::open(context_of(kContextId), kDevice, metrics, 16, error));
  EXPECT_EQ(error,
            "the GH100 GPU (device 0) does not support "
            "sm__warps_active.avg.pct_of_peak_sustained_active, lts__t_sector_hit_rate.pct");
  const ObjectsAlive alive = objects_alive();
  EXPECT_EQ(alive.initialized, 0) << "the profiler interface is released";
  EXPECT_EQ(alive.hosts, 0u);
  EXPECT_EQ(alive.range_profilers, 0u);
}

TEST_F(RangeProfiler, RefusalsNameTheCallAndCuptisError) {
  fake().fake_cupti_fail("cuptiRangeProfilerEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  std::string error;
  EXPECT_FALSE(open(error));
  EXPECT_NE(error.find("cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("administrators"), std::string::npos) << error;
  EXPECT_EQ(objects_alive().hosts, 0u);
  fake().fake_cupti_fail("cuptiRangeProfilerEnable", CUPTI_SUCCESS);

  // The double allows one range profiler per context: a second session there is refused.
  const auto first = open(error);
  ASSERT_TRUE(first) << error;
  EXPECT_FALSE(open(error));
  EXPECT_EQ(error, "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INVALID_OPERATION (7)");
}

TEST_F(RangeProfiler, ADecodingFailureIsReportedWithNothingMadeUp) {
  std::string error;
  const auto session = open(error);
  ASSERT_TRUE(session) << error;
  ASSERT_EQ(session->start(), "");
  launch("gemm");
  fake().fake_cupti_fail("cuptiRangeProfilerDecodeData", CUPTI_ERROR_UNKNOWN);
  const KernelMetrics& collected = session->collect();
  EXPECT_TRUE(collected.kernels.empty());
  EXPECT_EQ(collected.error, "cuptiRangeProfilerDecodeData failed: CUPTI_ERROR_UNKNOWN (999)");
}

TEST_F(RangeProfiler, AnEvaluationFailureSaysHowManyKernelsItCost) {
  std::string error;
  const auto session = open(error);
  ASSERT_TRUE(session) << error;
  ASSERT_EQ(session->start(), "");
  launch("gemm");
  launch("gemm");
  fake().fake_cupti_fail("cuptiProfilerHostEvaluateToGpuValues", CUPTI_ERROR_INVALID_METRIC_NAME);
  const KernelMetrics& collected = session->collect();
  EXPECT_TRUE(collected.kernels.empty());
  EXPECT_EQ(collected.error,
            "cuptiProfilerHostEvaluateToGpuValues failed: CUPTI_ERROR_INVALID_METRIC_NAME (17) "
            "(kernel 0 of 2; the 1 after it are not evaluated)");
}

TEST_F(RangeProfiler, AMissingEntryPointIsNamed) {
  CuptiApi api = CuptiLibrary::instance().api();
  api.RangeProfilerDecodeData = nullptr;  // a libcupti from before the Range Profiler API
  std::string error;
  EXPECT_FALSE(KernelMetricsSession::open_with(api, context_of(kContextId), kDevice, kMetrics, 16, error));
  EXPECT_EQ(error, "this libcupti has no Range Profiler API (cuptiRangeProfilerDecodeData is missing): "
                   "per-kernel GPU metrics need a newer CUPTI");
  // No entry point at all, as without libcupti: the same message, no call made.
  EXPECT_FALSE(
      KernelMetricsSession::open_with(CuptiApi{}, context_of(kContextId), kDevice, kMetrics, 16, error));
  EXPECT_NE(error.find("cuptiGetContextId is missing"), std::string::npos) << error;
  EXPECT_EQ(objects_alive().initialized, 0);
}

TEST_F(RangeProfiler, NothingIsAskedForNothing) {
  std::string error;
  EXPECT_FALSE(KernelMetricsSession::open(context_of(kContextId), kDevice, {}, 16, error));
  EXPECT_NE(error, "");
  EXPECT_FALSE(open(error, /*max_kernels=*/0));
  EXPECT_NE(error, "");
}

TEST_F(RangeProfiler, ClosingReleasesEverythingAfterItsLastUser) {
  std::string error;
  auto first = open(error);
  ASSERT_TRUE(first) << error;
  auto second = open(error, 16, kContextId + 1);
  ASSERT_TRUE(second) << error;
  ASSERT_EQ(first->start(), "");
  launch("gemm");
  EXPECT_EQ(objects_alive().range_profilers, 2u);

  first.reset();  // while started
  ObjectsAlive alive = objects_alive();
  EXPECT_EQ(alive.initialized, 1) << "the second session still uses the profiler interface";
  EXPECT_EQ(alive.hosts, 1u);
  EXPECT_EQ(alive.range_profilers, 1u);
  second.reset();
  alive = objects_alive();
  EXPECT_EQ(alive.initialized, 0);
  EXPECT_EQ(alive.hosts, 0u);
  EXPECT_EQ(alive.range_profilers, 0u);
}

TEST_F(RangeProfiler, SupportedGroupsAreThoseWhoseEveryMetricTheChipHas) {
  // Memory's (from SetUp) and Occupancy's; of L2Cache only the hit rate.
  add_metric(CUPTI_METRIC_TYPE_COUNTER, "sm__warps_active");
  add_metric(CUPTI_METRIC_TYPE_RATIO, "lts__t_sector_hit_rate");
  std::string error;
  EXPECT_EQ(supported_metric_groups(kDevice, error),
            (std::vector<GpuMetricGroup>{GpuMetricGroup::Memory, GpuMetricGroup::Occupancy}));
  EXPECT_EQ(error, "");

  for (const GpuMetricColumn& column : gpu_metric_columns(GpuMetricGroup::L2Cache)) {
    for (const GpuMetricTerm& term : column.terms) {
      add_metric(CUPTI_METRIC_TYPE_THROUGHPUT, std::string(base_metric(term.metric)).c_str());
    }
  }
  EXPECT_EQ(supported_metric_groups(kDevice, error),
            (std::vector<GpuMetricGroup>{GpuMetricGroup::Memory, GpuMetricGroup::L2Cache,
                                         GpuMetricGroup::Occupancy}));
  EXPECT_EQ(objects_alive().hosts, 0u);
}

TEST_F(RangeProfiler, SupportedGroupsOfAnUnknownDeviceSayWhy) {
  std::string error;
  EXPECT_TRUE(supported_metric_groups(/*device=*/5, error).empty());
  EXPECT_EQ(error, "cuptiDeviceGetChipName failed: CUPTI_ERROR_INVALID_DEVICE (2)");
  EXPECT_EQ(objects_alive().initialized, 0);
}

}  // namespace
}  // namespace perfprof
