// key_averages over a hand-built trace: counts, CPU and self CPU time, device time through
// external ids, FLOPs, and grouping by input shape and call stack.
#include <gtest/gtest.h>

#include "model_builder.h"

#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/key_averages.h"

namespace perfprof {
namespace {

using test::ModelBuilder;

constexpr std::string_view kLinearShapes = R"("Input Dims": [[8, 64], [32, 64], [32]], "Input type": ["float", "float", "float"])";
constexpr std::string_view kSmallLinearShapes = R"("Input Dims": [[4, 64], [32, 64], [32]])";
constexpr std::string_view kAddmmShapes = R"("Input Dims": [[32], [8, 64], [64, 32], [], []])";

// main() > ProfilerStep#0 > forward() > linear > addmm > cudaLaunchKernel
//                                     > linear > helper()
//                        > head() > linear (smaller input)
//  plus an async linear, ignored.
ModelBuilder sample() {
  ModelBuilder b;
  b.frame(0, 1000, "train.py(10): main");                                   // 0
  b.range(0, 1000, "ProfilerStep#0", "user_annotation", 1);                  // 1
  b.frame(100, 600, "model.py(5): forward");                                 // 2
  b.op(100, 400, "aten::linear", 3, kLinearShapes);                          // 3
  b.op(150, 350, "aten::addmm", 4, kAddmmShapes);                            // 4
  b.range(200, 250, "cudaLaunchKernel", "cuda_runtime", 5);                  // 5
  b.op(400, 600, "aten::linear", 6, kLinearShapes);                          // 6
  b.frame(410, 500, "util.py(2): helper", 10);                               // 7
  b.frame(600, 900, "model.py(9): head");                                    // 8
  b.op(650, 850, "aten::linear", 9, kSmallLinearShapes);                     // 9
  b.range(700, 2000, "aten::linear", "cpu_op", 11, kRangeAsync, 0, kLinearShapes);  // 10
  b.activity(5000, 5100, 4);                                  // addmm's kernel
  b.activity(5200, 5250, 6);                                  // second linear's
  b.activity(5300, 5320, 1, GpuActivityKind::Memcpy);         // the step's
  b.activity(5400, 5407, 10);                                 // launched from helper()
  b.activity(5000, 5500, 3, GpuActivityKind::UserAnnotation); // not device work
  b.activity(6000, 6030, 11);                                 // the async range's: ignored
  return b;
}

const KeyAverageRow* find(const std::vector<KeyAverageRow>& rows, std::string_view name,
                          std::string_view shapes = "", std::string_view stack = "") {
  for (const KeyAverageRow& row : rows) {
    if (row.name == name && row.input_shapes == shapes && row.stack == stack) return &row;
  }
  ADD_FAILURE() << "no row " << name << " / " << shapes << " / " << stack;
  static const KeyAverageRow kMissing;
  return &kMissing;
}

std::vector<std::string> names(const std::vector<KeyAverageRow>& rows) {
  std::vector<std::string> out;
  for (const KeyAverageRow& row : rows) out.push_back(row.name);
  return out;
}

TEST(KeyAverages, AggregatesEventsByName) {
  const ModelBuilder b = sample();
  const auto rows = key_averages(b.model(), build_op_tree(b.model()), {});
  EXPECT_EQ(names(rows), (std::vector<std::string>{"ProfilerStep#0", "aten::linear", "aten::addmm", "cudaLaunchKernel"}));

  const KeyAverageRow& step = *find(rows, "ProfilerStep#0");
  EXPECT_EQ(step.count, 1u);
  EXPECT_EQ(step.cpu_total_ns, 1000);
  EXPECT_EQ(step.self_cpu_ns, 1000 - 300 - 200 - 200);
  EXPECT_EQ(step.self_device_ns, 20);
  EXPECT_EQ(step.device_total_ns, 20 + 100 + 50 + 7);
  EXPECT_EQ(step.flops, 0u);

  const KeyAverageRow& linear = *find(rows, "aten::linear");
  EXPECT_EQ(linear.count, 3u);  // not the async one
  EXPECT_EQ(linear.cpu_total_ns, 300 + 200 + 200);
  EXPECT_EQ(linear.self_cpu_ns, (300 - 200) + 200 + 200);  // the helper() frame is not an event
  EXPECT_EQ(linear.self_device_ns, 50);
  EXPECT_EQ(linear.device_total_ns, 100 + 50 + 7);
  EXPECT_EQ(linear.flops, 0u);  // counted on the addmm it runs, not twice
  EXPECT_EQ(linear.input_shapes, "");
  EXPECT_EQ(linear.stack, "");

  const KeyAverageRow& addmm = *find(rows, "aten::addmm");
  EXPECT_EQ(addmm.count, 1u);
  EXPECT_EQ(addmm.cpu_total_ns, 200);
  EXPECT_EQ(addmm.self_cpu_ns, 150);
  EXPECT_EQ(addmm.self_device_ns, 100);
  EXPECT_EQ(addmm.device_total_ns, 100);
  EXPECT_EQ(addmm.flops, 2u * 8 * 64 * 32);

  const KeyAverageRow& launch = *find(rows, "cudaLaunchKernel");
  EXPECT_EQ(launch.self_cpu_ns, 50);
  EXPECT_EQ(launch.device_total_ns, 0);
}

TEST(KeyAverages, SelfTimesAddUpToTheOutermostEvents) {
  const ModelBuilder b = sample();
  int64_t self_cpu = 0;
  for (const KeyAverageRow& row : key_averages(b.model(), build_op_tree(b.model()), {})) self_cpu += row.self_cpu_ns;
  EXPECT_EQ(self_cpu, 1000);  // ProfilerStep#0 covers every event
}

TEST(KeyAverages, GroupsByInputShape) {
  const ModelBuilder b = sample();
  KeyAverageOptions options;
  options.group_by_input_shape = true;
  const auto rows = key_averages(b.model(), build_op_tree(b.model()), options);
  EXPECT_EQ(names(rows), (std::vector<std::string>{"ProfilerStep#0", "aten::linear", "aten::addmm",
                                                   "cudaLaunchKernel", "aten::linear"}));
  const KeyAverageRow& big = *find(rows, "aten::linear", "[[8, 64], [32, 64], [32]]");
  EXPECT_EQ(big.count, 2u);
  EXPECT_EQ(big.cpu_total_ns, 500);
  EXPECT_EQ(big.flops, 0u);
  const KeyAverageRow& small = *find(rows, "aten::linear", "[[4, 64], [32, 64], [32]]");
  EXPECT_EQ(small.count, 1u);
  EXPECT_EQ(small.self_cpu_ns, 200);
  EXPECT_EQ(find(rows, "aten::addmm", "[[32], [8, 64], [64, 32], [], []]")->count, 1u);
  EXPECT_EQ(find(rows, "ProfilerStep#0", "")->count, 1u);
}

TEST(KeyAverages, GroupsByInnermostFrames) {
  const ModelBuilder b = sample();
  const OpTree tree = build_op_tree(b.model());
  KeyAverageOptions options;
  options.group_by_stack_n = 1;
  auto rows = key_averages(b.model(), tree, options);
  EXPECT_EQ(rows.size(), 5u);
  EXPECT_EQ(find(rows, "ProfilerStep#0", "", "train.py(10): main")->count, 1u);
  EXPECT_EQ(find(rows, "aten::linear", "", "model.py(5): forward")->count, 2u);
  EXPECT_EQ(find(rows, "aten::linear", "", "model.py(9): head")->count, 1u);
  EXPECT_EQ(find(rows, "aten::addmm", "", "model.py(5): forward")->count, 1u);

  options.group_by_stack_n = 2;
  options.group_by_input_shape = true;
  rows = key_averages(b.model(), tree, options);
  const KeyAverageRow& linear =
      *find(rows, "aten::linear", "[[8, 64], [32, 64], [32]]", "model.py(5): forward\ntrain.py(10): main");
  EXPECT_EQ(linear.count, 2u);
  EXPECT_EQ(linear.device_total_ns, 157);
}

TEST(KeyAverages, GarbageInputDimsCountNoFlops) {
  ModelBuilder b;
  b.op(0, 10, "aten::mm", 1, R"("Input Dims": [[8, 64], [64)");
  b.op(10, 20, "aten::mm", 2, R"("Input Dims": [[8, 64], [64, 32]])");
  b.op(20, 30, "aten::mm", 3, "");
  KeyAverageOptions options;
  options.group_by_input_shape = true;
  const auto rows = key_averages(b.model(), build_op_tree(b.model()), options);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].input_shapes, "");  // malformed and absent shapes group together
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[0].flops, 0u);
  EXPECT_EQ(rows[1].flops, 2u * 8 * 64 * 32);
}

TEST(KeyAverages, EmptyTrace) {
  const TraceModel model;
  EXPECT_TRUE(key_averages(model, build_op_tree(model), {}).empty());
}

}  // namespace
}  // namespace perfprof
