// The summary tables (analysis/): kernel_details, op_statistic and api_statistic,
// operator_details, step_trace_time and data_preprocess, on traces built by hand, against hand
// computations.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/analysed_trace.h"
#include "analysis/data_preprocess.h"
#include "analysis/device_work.h"
#include "analysis/duration_statistics.h"
#include "analysis/kernel_details.h"
#include "analysis/key_averages.h"
#include "analysis/operator_details.h"
#include "analysis/step_trace_time.h"
#include "analysis/time_intervals.h"
#include "export/exporters.h"
#include "kernel_metrics_model.h"
#include "model_builder.h"
#include "test_util.h"

namespace perfprof {
namespace {

using test::ModelBuilder;

constexpr uint32_t kComputeStream = 7;
constexpr uint32_t kNcclStream = 13;
constexpr const char* kGemm = "void gemm_kernel<float>(float*)";
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// --- time_intervals ------------------------------------------------------------------------

TEST(TimeIntervals, UnionMergesOverlapsAndIntersectionKeepsTheCommonTime) {
  const TimeSet a = union_of({{50, 60}, {0, 10}, {5, 20}, {30, 30}});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].begin_ns, 0);
  EXPECT_EQ(a[0].end_ns, 20);
  EXPECT_EQ(a[1].begin_ns, 50);
  const TimeSet b = union_of({{15, 55}});
  const TimeSet both = intersection_of(a, b);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(covered_ns(both, 0, 100), 5 + 5);
  EXPECT_EQ(covered_ns(a, 8, 52), 12 + 2);
  EXPECT_EQ(first_in(a, 25, 100), 50);
  EXPECT_EQ(first_in(a, 8, 100), 8);
  EXPECT_FALSE(first_in(a, 20, 50).has_value());
}

// --- step_trace_time -----------------------------------------------------------------------

// Three steps. Stream 7 computes (K1, K2, K3) and copies (C1); stream 13 runs NCCL (N1, N2):
//   step 1 [1000, 2000): K1 [1100, 1400), N1 [1300, 1600), C1 [1700, 1750), K2 [1900, 2100)
//   step 2 [2000, 3000): K2's last 100 ns, K3 [2500, 2600), N2 [2550, 2800)
//   step 3 [3000, 3500): nothing on the device
TraceModel steps_with_compute_and_communication() {
  ModelBuilder b;
  b.range(1000, 2000, "ProfilerStep#1", "user_annotation", 1);
  b.range(2000, 3000, "ProfilerStep#2", "user_annotation", 2);
  b.range(3000, 3500, "ProfilerStep#3", "user_annotation", 3);
  b.gpu_work(1100, 1400, kGemm, kComputeStream);
  b.gpu_work(1700, 1750, "Memcpy HtoD", kComputeStream, 0, GpuActivityKind::Memcpy);
  b.gpu_work(1900, 2100, kGemm, kComputeStream);
  b.gpu_work(2500, 2600, kGemm, kComputeStream);
  b.gpu_work(1300, 1600, kAllReduce, kNcclStream);
  b.gpu_work(2550, 2800, kAllReduce, kNcclStream);
  return b.model();
}

TEST(StepTraceTime, SplitsEachStepIntoComputeCommunicationOverlapAndFreeTime) {
  const std::vector<StepTraceTime> rows = step_trace_time(steps_with_compute_and_communication());
  ASSERT_EQ(rows.size(), 3u);
  const StepTraceTime& s1 = rows[0];
  EXPECT_EQ(s1.step, "1");
  EXPECT_EQ(s1.computing_ns, 300 + 100);                // K1, K2 up to the step's end
  EXPECT_EQ(s1.communication_ns, 300);                  // N1
  EXPECT_EQ(s1.overlapped_ns, 100);                     // [1300, 1400)
  EXPECT_EQ(s1.communication_not_overlapped_ns, 200);
  EXPECT_EQ(s1.free_ns, 1000 - (500 + 50 + 100));       // outside [1100, 1600), C1, K2
  EXPECT_EQ(s1.preparing_ns, 100);                      // to K1
  EXPECT_EQ(s1.stage_ns, 1000);
  EXPECT_EQ(s1.bubble_ns, 0);
  EXPECT_EQ(s1.communication_not_overlapped_exclude_receive_ns, 200);

  const StepTraceTime& s2 = rows[1];
  EXPECT_EQ(s2.step, "2");
  EXPECT_EQ(s2.computing_ns, 100 + 100);  // K2's rest, K3
  EXPECT_EQ(s2.communication_ns, 250);
  EXPECT_EQ(s2.overlapped_ns, 50);         // [2550, 2600)
  EXPECT_EQ(s2.communication_not_overlapped_ns, 200);
  EXPECT_EQ(s2.free_ns, 1000 - (100 + 300));
  EXPECT_EQ(s2.preparing_ns, 0);           // K2 still runs as the step begins

  const StepTraceTime& s3 = rows[2];
  EXPECT_EQ(s3.computing_ns + s3.communication_ns + s3.overlapped_ns, 0);
  EXPECT_EQ(s3.free_ns, 500);
  EXPECT_EQ(s3.preparing_ns, 500);
  EXPECT_EQ(s3.stage_ns, 500);
}

// Two threads' operators overlap in step 1; a GC pause runs partly inside an operator, partly
// alone, and on into step 2.
TEST(StepTraceTime, HostTimeIsTheUnionOfOperatorsAndTheGcPausesOutsideThem) {
  ModelBuilder b;
  b.range(1000, 2000, "ProfilerStep#1", "user_annotation", 1);
  b.op(1100, 1300, "aten::mm", 2, "");
  b.op(1150, 1200, "aten::add", 3, "");  // nested: counted once
  b.range(1800, 2100, "gc", "gc");       // 1800-1900 inside aten::relu below, then alone
  b.range(2000, 3000, "ProfilerStep#2", "user_annotation", 4);
  b.range(1250, 1400, "autograd::engine", "cpu_op", 5, 0, 1);  // another thread: 1300-1400 added
  b.range(1700, 1900, "aten::relu", "cpu_op", 6, 0, 1);
  const std::vector<StepHostTime> rows = step_host_time(b.model());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].host_operators_ns, 300 + 200);  // [1100, 1400), [1700, 1900)
  EXPECT_EQ(rows[0].host_gc_ns, 100);                // [1900, 2000)
  EXPECT_EQ(rows[1].host_operators_ns, 0);
  EXPECT_EQ(rows[1].host_gc_ns, 100);                // [2000, 2100)
}

TEST(StepTraceTime, ComputingPlusExposedCommunicationPlusFreeIsTheStepWithoutCopies) {
  for (const StepTraceTime& row : step_trace_time(steps_with_compute_and_communication())) {
    const int64_t copies_only = row.step == "1" ? 50 : 0;
    EXPECT_EQ(row.computing_ns + row.communication_not_overlapped_ns + row.free_ns + copies_only,
              row.end_ns - row.begin_ns)
        << "step " << row.step;
  }
}

TEST(SummaryCsv, StepTraceTimeCsvHasMsprofColumnsInMicroseconds) {
  const AnalysedTrace trace(steps_with_compute_and_communication());
  ASSERT_TRUE(has_summary(trace, SummaryTable::StepTraceTime));
  test::TempDir dir;
  SummaryCsvExporter(SummaryTable::StepTraceTime).write(trace, dir.file("step_trace_time.csv"));
  EXPECT_EQ(test::read_file(dir.file("step_trace_time.csv")),
            "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
            "Communication(Not Overlapped and Exclude Receive),Preparing\n"
            "1,0.400,0.200,0.100,0.300,0.350,1.000,0.000,0.200,0.100\n"
            "2,0.200,0.200,0.050,0.250,0.600,1.000,0.000,0.200,0.000\n"
            "3,0.000,0.000,0.000,0.000,0.500,0.500,0.000,0.000,0.500\n");
}

TEST(SummaryCsv, OpStatisticCsvHasNsysColumnsAndQuotesNames) {
  ModelBuilder b;
  b.gpu_work(0, 100, "gemm<float, 2>", kComputeStream);
  b.gpu_work(200, 500, "gemm<float, 2>", kComputeStream);
  b.gpu_work(600, 700, "relu", kComputeStream);
  const AnalysedTrace trace(b.model());
  test::TempDir dir;
  SummaryCsvExporter(SummaryTable::OpStatistic).write(trace, dir.file("op_statistic.csv"));
  EXPECT_EQ(test::read_file(dir.file("op_statistic.csv")),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "80.0,400,2,200.0,200.0,100,300,141.4,\"gemm<float, 2>\"\n"
            "20.0,100,1,100.0,100.0,100,100,0.0,relu\n");
  EXPECT_FALSE(has_summary(trace, SummaryTable::ApiStatistic));
  EXPECT_FALSE(has_summary(trace, SummaryTable::StepTraceTime));
  EXPECT_FALSE(has_summary(trace, SummaryTable::OperatorDetails));
}

TEST(SummaryCsv, KernelDetailsCsvHasAColumnPerMeasuredMetric) {
  const AnalysedTrace trace(test::measured_kernels());
  test::TempDir dir;
  SummaryCsvExporter(SummaryTable::KernelDetails).write(trace, dir.file("kernel_details.csv"));
  // gemm's DRAM Read was not evaluated (NaN); the copy and relu were not measured.
  EXPECT_EQ(test::read_file(dir.file("kernel_details.csv")),
            "Name,Type,Device,Stream,Start Time(us),Duration(us),Wait Time(us),Grid,Block,"
            "Theoretical Occupancy(%),Operator,SM Throughput (%),DRAM Read (bytes),"
            "\"DRAM Write (bytes, \"\"all\"\")\"\n"
            "gemm,Compute,1,7,1700000000000001.000,0.200,0.000,\"[80, 1, 1]\",\"[256, 1, 1]\",,,87.5,,12345678901\n"
            "Memcpy DtoH,Memory,1,7,1700000000000001.300,0.100,0.100,,,,,,,\n"
            "relu,Compute,1,7,1700000000000001.500,0.100,0.100,\"[0, 0, 0]\",\"[0, 0, 0]\",,,,,\n");
}

TEST(SummaryCsv, KernelDetailsCsvWithoutMetricsEndsAtOperator) {
  ModelBuilder b;
  b.gpu_work(0, 100, "relu", kComputeStream);
  test::TempDir dir;
  SummaryCsvExporter(SummaryTable::KernelDetails).write(AnalysedTrace(b.model()), dir.file("kernel_details.csv"));
  EXPECT_EQ(test::read_file(dir.file("kernel_details.csv")),
            "Name,Type,Device,Stream,Start Time(us),Duration(us),Wait Time(us),Grid,Block,"
            "Theoretical Occupancy(%),Operator\n"
            "relu,Compute,0,7,0.000,0.100,0.000,\"[0, 0, 0]\",\"[0, 0, 0]\",,\n");
}

TEST(DeviceWork, NcclAndRcclKernelsAreCommunicationCopiesAreMemory) {
  EXPECT_TRUE(is_communication_kernel(kAllReduce));
  EXPECT_TRUE(is_communication_kernel("void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"));
  EXPECT_TRUE(is_communication_kernel("rcclGenericKernel"));
  EXPECT_FALSE(is_communication_kernel(kGemm));
  EXPECT_FALSE(is_communication_kernel("elementwise_nccl_like"));
}

// --- kernel_details ------------------------------------------------------------------------

// record_function "block" around aten::linear around aten::mm, which launches a GEMM (correlation
// 11); the block itself launches a copy (12); an all-reduce runs with no host call recorded.
TraceModel launches() {
  ModelBuilder b;
  b.range(50, 900, "block", "user_annotation", 5);
  b.op(100, 800, "aten::linear", 1, "");
  b.op(150, 500, "aten::mm", 2, "");
  b.api_call(200, 300, "cudaLaunchKernel", 11);
  b.api_call(850, 880, "cudaMemcpyAsync", 12);
  GpuActivity& gemm = b.gpu_work(1000, 1200, kGemm, kComputeStream, 11);
  gemm.grid[0] = 80;
  gemm.grid[1] = gemm.grid[2] = 1;
  gemm.block[0] = 256;
  gemm.block[1] = gemm.block[2] = 1;
  gemm.registers_per_thread = 32;
  b.gpu_work(1500, 1600, "Memcpy DtoH", kComputeStream, 12, GpuActivityKind::Memcpy);
  b.gpu_work(1700, 1800, kGemm, kComputeStream);
  b.gpu_work(1100, 1300, kAllReduce, kNcclStream);
  GpuDevice device;
  device.sm_count = 80;
  device.warp_size = 32;
  device.max_threads_per_block = 1024;
  device.max_registers_per_block = device.max_registers_per_sm = 65536;
  device.max_shared_memory_per_block = device.max_shared_memory_per_sm = 49152;
  device.max_warps_per_sm = 64;
  device.max_blocks_per_sm = 32;
  b.mutable_model().gpu.devices.push_back(device);
  return b.model();
}

TEST(KernelDetails, GivesEachKernelItsTypeStreamWaitAndLaunchingOperator) {
  const AnalysedTrace trace(launches());
  const TraceModel& model = trace.model();
  const std::vector<KernelDetail> rows = kernel_details(trace);
  ASSERT_EQ(rows.size(), 4u);
  // Stream 7: the GEMM, the copy 300 ns after it, the second GEMM 100 ns after the copy.
  EXPECT_EQ(model.str(rows[0].name), kGemm);
  EXPECT_EQ(rows[0].type, DeviceWorkType::Compute);
  EXPECT_EQ(rows[0].stream, kComputeStream);
  EXPECT_EQ(rows[0].start_ns, 1000);
  EXPECT_EQ(rows[0].duration_ns, 200);
  EXPECT_EQ(rows[0].wait_ns, 0);
  ASSERT_GE(rows[0].operator_row, 0);
  EXPECT_EQ(model.str(model.ranges.name[rows[0].operator_row]), "aten::mm");
  ASSERT_GE(rows[0].root_operator_row, 0);  // the operator the user called, around aten::mm
  EXPECT_EQ(model.str(model.ranges.name[rows[0].root_operator_row]), "aten::linear");
  ASSERT_GE(rows[0].launch_row, 0);
  EXPECT_EQ(model.ranges.begin_ns[rows[0].launch_row], 200);  // its cudaLaunchKernel (correlation 11)
  EXPECT_EQ(rows[0].grid[0], 80u);
  EXPECT_EQ(rows[0].block[0], 256u);
  ASSERT_TRUE(rows[0].occupancy_percent.has_value());
  EXPECT_EQ(*rows[0].occupancy_percent, *trace.gpu_metrics().occupancy_percent[0]);

  EXPECT_EQ(rows[1].type, DeviceWorkType::Memory);
  EXPECT_EQ(rows[1].wait_ns, 300);
  EXPECT_EQ(rows[1].operator_row, -1);  // launched by the annotation, no operator around it
  EXPECT_EQ(rows[1].root_operator_row, -1);
  ASSERT_GE(rows[1].launch_row, 0);
  EXPECT_EQ(model.str(model.ranges.name[rows[1].launch_row]), "cudaMemcpyAsync");
  EXPECT_FALSE(rows[1].occupancy_percent.has_value());

  EXPECT_EQ(rows[2].wait_ns, 100);
  EXPECT_EQ(rows[2].operator_row, -1);  // no correlation
  EXPECT_EQ(rows[2].launch_row, -1);

  EXPECT_EQ(rows[3].type, DeviceWorkType::Communication);
  EXPECT_EQ(rows[3].stream, kNcclStream);
  EXPECT_EQ(rows[3].wait_ns, 0);  // first on its stream, though stream 7 ran before
}

TEST(KernelDetails, WaitCountsFromTheLatestEndOnTheStreamAndIsNeverNegative) {
  ModelBuilder b;
  b.gpu_work(0, 500, kGemm, kComputeStream);
  b.gpu_work(100, 200, kGemm, kComputeStream);  // inside the first (clocks of two SMs)
  b.gpu_work(700, 800, kGemm, kComputeStream);
  const std::vector<KernelDetail> rows = kernel_details(AnalysedTrace(b.model()));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].wait_ns, 0);
  EXPECT_EQ(rows[2].wait_ns, 700 - 500);
}

// --- op_statistic, api_statistic -----------------------------------------------------------

TEST(DurationStatistics, KernelsPerNameWithNsysColumns) {
  ModelBuilder b;
  b.gpu_work(0, 100, "gemm", kComputeStream);
  b.gpu_work(200, 500, "gemm", kComputeStream);
  b.gpu_work(600, 1100, "relu", kComputeStream);
  b.gpu_work(1200, 1400, "gemm", kComputeStream);
  b.gpu_work(1500, 1900, "gemm", kComputeStream);
  b.gpu_work(2000, 5000, "Memcpy HtoD", kComputeStream, 0, GpuActivityKind::Memcpy);
  const TraceModel& model = b.model();
  const std::vector<DurationStatistics> rows = kernel_statistics(model);
  ASSERT_EQ(rows.size(), 2u);  // the copy is no kernel
  const DurationStatistics& gemm = rows[0];  // longest total first
  EXPECT_EQ(model.str(gemm.name), "gemm");
  EXPECT_EQ(gemm.count, 4u);
  EXPECT_EQ(gemm.total_ns, 100 + 300 + 200 + 400);
  EXPECT_DOUBLE_EQ(gemm.average_ns, 250);
  EXPECT_DOUBLE_EQ(gemm.median_ns, (200 + 300) / 2.0);
  EXPECT_EQ(gemm.min_ns, 100);
  EXPECT_EQ(gemm.max_ns, 400);
  // Sample deviation: squares 150² + 50² + 50² + 150² over n - 1 = 3.
  EXPECT_DOUBLE_EQ(gemm.stdev_ns, std::sqrt(50000.0 / 3));
  EXPECT_DOUBLE_EQ(gemm.percent, 100.0 * 1000 / 1500);
  const DurationStatistics& relu = rows[1];
  EXPECT_EQ(relu.count, 1u);
  EXPECT_DOUBLE_EQ(relu.median_ns, 500);
  EXPECT_DOUBLE_EQ(relu.stdev_ns, 0);
  EXPECT_DOUBLE_EQ(relu.percent, 100.0 * 500 / 1500);
}

TEST(DurationStatistics, TotalsOfKernelsEqualTheSumOfKernelDurations) {
  const TraceModel model = steps_with_compute_and_communication();
  int64_t kernels = 0;
  for (const GpuActivity& a : model.gpu.activities) {
    if (a.kind == GpuActivityKind::Kernel) kernels += a.end_ns - a.start_ns;
  }
  int64_t total = 0;
  for (const DurationStatistics& row : kernel_statistics(model)) total += row.total_ns;
  EXPECT_EQ(total, kernels);
}

TEST(DurationStatistics, ApiCallsPerNameRuntimeAndDriver) {
  ModelBuilder b;
  b.op(0, 1000, "aten::mm", 1, "");
  b.api_call(100, 150, "cudaLaunchKernel", 1);
  b.api_call(200, 230, "cuLaunchKernel", 1, /*driver=*/true);
  b.api_call(300, 400, "cudaLaunchKernel", 2);
  const TraceModel& model = b.model();
  const std::vector<DurationStatistics> rows = api_statistics(model);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(model.str(rows[0].name), "cudaLaunchKernel");
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[0].total_ns, 150);
  EXPECT_EQ(model.str(rows[1].name), "cuLaunchKernel");
  EXPECT_EQ(rows[1].total_ns, 30);
  EXPECT_DOUBLE_EQ(rows[0].percent + rows[1].percent, 100);
}

// --- operator_details ----------------------------------------------------------------------

TraceModel operators() {
  ModelBuilder b;
  b.range(0, 2000, "forward", "user_annotation", 9);
  b.op(10, 110, "aten::mm", 1, "[[2, 3], [3, 4]]");
  b.op(200, 260, "aten::mm", 2, "[[2, 3], [3, 4]]");
  b.op(300, 400, "aten::mm", 3, "[[5, 5], [5, 5]]");
  b.op(500, 700, "aten::linear", 4, "");
  b.op(520, 600, "aten::addmm", 5, "");
  b.activity(1000, 1030, 1);
  b.activity(1100, 1140, 5);
  return b.model();
}

TEST(OperatorDetails, PerNameAndInputShapesWithHostAndDeviceTimes) {
  const TraceModel model = operators();
  const std::vector<OperatorDetail> rows = operator_details(model);
  ASSERT_EQ(rows.size(), 4u);  // the annotation is no operator
  EXPECT_EQ(model.str(rows[0].name), "aten::mm");
  EXPECT_EQ(rows[0].input_shapes, "[[2, 3], [3, 4]]");
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[0].host_total_ns, 160);
  EXPECT_EQ(rows[0].host_self_ns, 160);
  EXPECT_EQ(rows[0].device_total_ns, 30);
  EXPECT_EQ(rows[0].device_self_ns, 30);
  EXPECT_EQ(rows[1].input_shapes, "[[5, 5], [5, 5]]");
  EXPECT_EQ(rows[1].count, 1u);
  EXPECT_EQ(model.str(rows[2].name), "aten::linear");
  EXPECT_EQ(rows[2].host_total_ns, 200);
  EXPECT_EQ(rows[2].host_self_ns, 200 - 80);
  EXPECT_EQ(rows[2].device_total_ns, 40);
  EXPECT_EQ(rows[2].device_self_ns, 0);
  EXPECT_EQ(model.str(rows[3].name), "aten::addmm");
  EXPECT_EQ(rows[3].device_self_ns, 40);
}

TEST(OperatorDetails, EqualKeyAveragesGroupedByInputShape) {
  const TraceModel model = operators();
  KeyAverageOptions options;
  options.group_by_input_shape = true;
  const std::vector<KeyAverageRow> averages = key_averages(model, options);
  for (const OperatorDetail& row : operator_details(model)) {
    const auto same = std::find_if(averages.begin(), averages.end(), [&](const KeyAverageRow& a) {
      return a.name == model.str(row.name) && a.input_shapes == row.input_shapes;
    });
    ASSERT_NE(same, averages.end()) << model.str(row.name);
    EXPECT_EQ(row.count, same->count);
    EXPECT_EQ(row.host_total_ns, same->cpu_total_ns);
    EXPECT_EQ(row.host_self_ns, same->self_cpu_ns);
    EXPECT_EQ(row.device_total_ns, same->device_total_ns);
    EXPECT_EQ(row.device_self_ns, same->self_device_ns);
  }
}

// --- data_preprocess -----------------------------------------------------------------------

TEST(DataPreprocess, SumsEachStepsDataLoaderFetches) {
  ModelBuilder b;
  b.range(1000, 2000, "ProfilerStep#4", "user_annotation", 1);
  b.range(1000, 1300, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "user_annotation", 2);
  b.range(2000, 3000, "ProfilerStep#5", "user_annotation", 3);
  b.range(2100, 2150, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "user_annotation", 4);
  b.range(2200, 2900, "record_param_comms", "user_annotation", 5);
  const TraceModel& model = b.model();
  EXPECT_TRUE(has_data_loader_fetches(model));
  const std::vector<DataPreprocess> rows = data_preprocess(model);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, "4");
  EXPECT_EQ(rows[0].count, 1u);
  EXPECT_EQ(rows[0].total_ns, 300);
  EXPECT_EQ(rows[1].step, "5");
  EXPECT_EQ(rows[1].total_ns, 50);
  EXPECT_FALSE(has_data_loader_fetches(operators()));
}

}  // namespace
}  // namespace perfprof
