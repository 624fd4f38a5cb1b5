// Communication as cluster analysis reads it: torch.distributed's host ranges, the
// communication_ops rows (device kernels and backends' ranges, with their sizes), and
// step_trace_time on a trace without device work, where the host is the device.
#include <gtest/gtest.h>

#include <vector>

#include "analysis/analysed_trace.h"
#include "analysis/communication_ops.h"
#include "analysis/host_collectives.h"
#include "analysis/step_trace_time.h"
#include "model_builder.h"

namespace perfprof {
namespace {

using test::ModelBuilder;

TEST(HostCollectives, NamesTorchDistributedRangesAndNothingElse) {
  for (const char* name : {"c10d::allreduce_", "c10d::broadcast_", "gloo:all_reduce", "nccl:all_gather",
                           "mpi:send", "ucc:barrier", "record_param_comms"}) {
    EXPECT_TRUE(is_host_collective(name)) << name;
  }
  for (const char* name : {"aten::add", "glooish", "all_reduce", "ProfilerStep#1", "nccl_kernel"}) {
    EXPECT_FALSE(is_host_collective(name)) << name;
  }
  EXPECT_TRUE(is_backend_collective("gloo:all_reduce"));
  EXPECT_FALSE(is_backend_collective("c10d::allreduce_"));  // where it is called, not the exchange
}

// A CPU job over gloo, as torch records it: the main thread computes and calls c10d; gloo's
// thread runs the exchange (waiting for the other ranks included).
//   step 1 [1000, 2000): main: aten::mm [1100, 1300), c10d::allreduce_ [1300, 1320),
//                        aten::add [1500, 1600); gloo: gloo:all_reduce [1310, 1700)
//   step 2 [2000, 3000): main: aten::mm [2100, 2200); gloo: gloo:all_reduce [2900, 3100)
ModelBuilder cpu_job_over_gloo() {
  ModelBuilder b;
  b.range(1000, 2000, "ProfilerStep#1", "user_annotation", 1);
  b.op(1100, 1300, "aten::mm", 2, "[[8, 8], [8, 8]]");
  b.op(1300, 1320, "c10d::allreduce_", 3, "");
  b.op(1500, 1600, "aten::add", 4, "");
  b.range(2000, 3000, "ProfilerStep#2", "user_annotation", 5);
  b.op(2100, 2200, "aten::mm", 6, "");
  b.range(1310, 1700, "gloo:all_reduce", "user_annotation", 7, 0, 1, "[[1000]]");
  b.range(2900, 3100, "gloo:all_reduce", "user_annotation", 8, 0, 1, "[[[4, 8], [16]]]");
  return b;
}

TEST(StepTraceTime, TheHostIsTheDeviceWhenNoDeviceWorkWasRecorded) {
  const TraceModel model = cpu_job_over_gloo().model();
  EXPECT_EQ(step_time_source(model), StepTimeSource::Host);
  const std::vector<StepTraceTime> rows = step_trace_time(model);
  ASSERT_EQ(rows.size(), 2u);
  // C = [1100, 1300) ∪ [1500, 1600); M = [1300, 1320) ∪ [1310, 1700) = [1300, 1700)
  EXPECT_EQ(rows[0].computing_ns, 200 + 100);
  EXPECT_EQ(rows[0].communication_ns, 400);
  EXPECT_EQ(rows[0].overlapped_ns, 100);  // aten::add during the exchange
  EXPECT_EQ(rows[0].communication_not_overlapped_ns, 300);
  EXPECT_EQ(rows[0].free_ns, 1000 - 600);  // outside [1100, 1700)
  EXPECT_EQ(rows[0].preparing_ns, 100);
  EXPECT_EQ(rows[1].computing_ns, 100);
  EXPECT_EQ(rows[1].communication_ns, 100);  // [2900, 3000): the rest is step 3's
  EXPECT_EQ(rows[1].free_ns, 1000 - 200);
}

TEST(StepTraceTime, AnyDeviceWorkMakesTheGpuTheDevice) {
  ModelBuilder b = cpu_job_over_gloo();
  b.gpu_work(1100, 1150, "gemm", 7);
  const std::vector<StepTraceTime> rows = step_trace_time(b.model());
  EXPECT_EQ(step_time_source(b.model()), StepTimeSource::Device);
  EXPECT_EQ(rows[0].computing_ns, 50);
  EXPECT_EQ(rows[0].communication_ns, 0);  // the host's ranges do not count then
  EXPECT_EQ(step_time_source_name(StepTimeSource::Host), "host");
}

TEST(CommunicationOps, BackendRangesWithTheirSizesFromShapesAndTypes) {
  ModelBuilder b = cpu_job_over_gloo();
  b.input_texts(6, ArgKey::InputTypes, {"float"});       // [[1000]]: 1000 floats
  b.input_texts(7, ArgKey::InputTypes, {"TensorList"});  // [[[4, 8], [16]]]: 48 elements of a type not recorded
  const std::vector<CommunicationOp> ops = communication_ops(AnalysedTrace(b.model()));
  ASSERT_EQ(ops.size(), 2u);  // c10d::allreduce_ is the call, not the exchange
  EXPECT_EQ(ops[0].source, CommunicationSource::Host);
  EXPECT_EQ(b.model().str(ops[0].name), "gloo:all_reduce");
  EXPECT_EQ(ops[0].begin_ns, 1310);
  EXPECT_EQ(ops[0].end_ns, 1700);
  EXPECT_EQ(ops[0].track, 1u);
  EXPECT_EQ(ops[0].range_row, 6);
  EXPECT_EQ(ops[0].elements, 1000u);
  EXPECT_EQ(ops[0].bytes, 4000u);
  EXPECT_EQ(b.model().str(*ops[0].data_type), "float");
  EXPECT_EQ(ops[1].elements, 4u * 8u + 16u);
  EXPECT_FALSE(ops[1].bytes.has_value());
  EXPECT_FALSE(ops[1].data_type.has_value());
  EXPECT_FALSE(ops[0].peer.has_value());  // a collective has no one peer
}

// gloo's send runs on the calling thread after c10d::send, whose third argument is the peer.
TEST(CommunicationOps, PointToPointOperationsTakeThePeerFromTheirC10dCall) {
  ModelBuilder b;
  const size_t send = b.op(100, 120, "c10d::send", 1, "[[[1000]], [], [], []]");
  b.input_texts(send, ArgKey::ConcreteInputs, {"", "", "3", "0"});
  b.range(110, 900, "gloo:send", "user_annotation", 2, 0, 0, "[[1000]]");
  const size_t recv = b.op(1000, 1010, "c10d::recv_", 3, "");
  b.input_texts(recv, ArgKey::ConcreteInputs, {"", "", "5", "0"});
  b.range(1020, 1500, "gloo:recv", "user_annotation", 4);
  b.range(2000, 2100, "gloo:send", "user_annotation", 5, 0, 1);  // another thread's: no call there
  const std::vector<CommunicationOp> ops = communication_ops(AnalysedTrace(b.model()));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].peer, 3);
  EXPECT_EQ(ops[1].peer, 5);
  EXPECT_FALSE(ops[2].peer.has_value());
}

TEST(CommunicationOps, AKernelTakesTheSizeOfTheBackendRangeAroundItsLaunch) {
  ModelBuilder b;
  const size_t range = b.range(100, 400, "nccl:all_reduce", "user_annotation", 1, 0, 0, "[[2, 512]]");
  b.input_texts(range, ArgKey::InputTypes, {"c10::BFloat16"});
  b.api_call(150, 180, "cudaLaunchKernel", 42);
  b.gpu_work(500, 900, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 13, 42);
  b.gpu_work(900, 950, "void gemm_kernel<float>(float*)", 13, 0);
  const std::vector<CommunicationOp> ops = communication_ops(AnalysedTrace(b.model()));
  ASSERT_EQ(ops.size(), 2u);  // the kernel, then the range
  EXPECT_EQ(ops[0].source, CommunicationSource::Device);
  EXPECT_EQ(ops[0].begin_ns, 500);
  EXPECT_EQ(ops[0].end_ns, 900);
  EXPECT_EQ(ops[0].stream, 13u);
  EXPECT_FALSE(ops[0].track.has_value());
  EXPECT_EQ(ops[0].range_row, static_cast<int64_t>(range));
  EXPECT_EQ(ops[0].bytes, 2u * 512u * 2u);
  EXPECT_EQ(ops[1].source, CommunicationSource::Host);
  EXPECT_EQ(communication_source_name(ops[0].source), "device");
}

}  // namespace
}  // namespace perfprof
