// key_averages over hand-built traces, against hand computations of torch.profiler's rules:
// counts, CPU and self CPU time, device time through external ids and GPU activity rows, memory,
// FLOPs, the merge of nested same-name calls, the ProfilerStep* row, Python function rows, and
// grouping by input shape and call stack.
#include <gtest/gtest.h>

#include "model_builder.h"

#include <string>
#include <string_view>

#include "analysis/key_averages.h"
#include "analysis/op_annotations.h"

namespace perfprof {
namespace {

using test::ModelBuilder;

constexpr std::string_view kLinearShapes = "[[8, 64], [32, 64], [32]]";
constexpr std::string_view kSmallLinearShapes = "[[4, 64], [32, 64], [32]]";
constexpr std::string_view kAddmmShapes = "[[32], [8, 64], [64, 32], [], []]";

// main() > ProfilerStep#0 > forward() > linear > addmm > cudaLaunchKernel
//                                     > linear > helper()
//                        > head() > linear (smaller input)
//  plus a linear ending on another thread.
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
  const size_t async = b.range(700, 2000, "aten::linear", "cpu_op", 11, kRangeAsync, 0, kLinearShapes);  // 10
  b.mutable_model().ranges.end_track[async] = 1;
  b.activity(5000, 5100, 4);                                  // addmm's kernel
  b.activity(5200, 5250, 6);                                  // second linear's
  b.activity(5300, 5320, 1, GpuActivityKind::Memcpy);         // the step's
  b.activity(5400, 5407, 10);                                 // launched from helper()
  b.activity(5000, 5500, 3, GpuActivityKind::UserAnnotation); // not device work
  b.activity(6000, 6030, 11);                                 // the async range's: unattributed
  return b;
}

// `b` as profiled with with_flops: its operators carry their FLOPs.
ModelBuilder with_flops(ModelBuilder b) {
  annotate_flops(b.mutable_model());
  return b;
}

const KeyAverageRow* find(const std::vector<KeyAverageRow>& rows, std::string_view name,
                          std::string_view shapes = "", std::string_view stack = "", bool device = false) {
  for (const KeyAverageRow& row : rows) {
    if (row.name == name && row.input_shapes == shapes && row.stack == stack && row.device == device) return &row;
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

KeyAverageOptions without_python() {
  KeyAverageOptions options;
  options.python_functions = false;
  return options;
}

TEST(KeyAverages, AggregatesEventsByName) {
  const ModelBuilder b = with_flops(sample());
  const auto rows = key_averages(b.model(), without_python());
  // Host events by first begin (longer first), then the GPU activities by theirs: the empty
  // name is the test's unnamed kernels and memcpy.
  EXPECT_EQ(names(rows), (std::vector<std::string>{"ProfilerStep*", "aten::linear", "aten::addmm", "cudaLaunchKernel", ""}));

  const KeyAverageRow& step = *find(rows, "ProfilerStep*");
  EXPECT_EQ(step.count, 1u);
  EXPECT_EQ(step.cpu_total_ns, 1000);
  EXPECT_EQ(step.self_cpu_ns, 1000 - 300 - 200 - 200);
  EXPECT_EQ(step.self_device_ns, 20);
  EXPECT_EQ(step.device_total_ns, 20 + 100 + 50 + 7);
  EXPECT_EQ(step.flops, 0u);

  const KeyAverageRow& linear = *find(rows, "aten::linear");
  EXPECT_EQ(linear.count, 4u);  // the one ending on another thread too
  EXPECT_EQ(linear.cpu_total_ns, 300 + 200 + 200 + 1300);
  EXPECT_EQ(linear.self_cpu_ns, (300 - 200) + 200 + 200);  // an async event has no self time
  EXPECT_EQ(linear.self_device_ns, 50 + 7);  // helper() is no event: its kernel is the linear's
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

  // Every device-work activity is an event on the device: kernels and the memcpy, not the
  // annotation.
  const KeyAverageRow& gpu = *find(rows, "", "", "", true);
  EXPECT_EQ(gpu.count, 5u);
  EXPECT_EQ(gpu.cpu_total_ns, 0);
  EXPECT_EQ(gpu.self_cpu_ns, 0);
  EXPECT_EQ(gpu.device_total_ns, 100 + 50 + 20 + 7 + 30);
  EXPECT_EQ(gpu.self_device_ns, gpu.device_total_ns);
}

// What a row takes from its first event, as torch's FunctionEventAvg does: whether it is a user
// annotation, ends on another thread, or nests in another event (top_level_events_only).
TEST(KeyAverages, RowsTellWhereTheirFirstEventStands) {
  const ModelBuilder b = sample();
  const auto flat = key_averages(b.model(), without_python());
  const KeyAverageRow& step = *find(flat, "ProfilerStep*");
  EXPECT_TRUE(step.user_annotation);
  EXPECT_FALSE(step.first_nested);  // the outermost event without Python frames
  EXPECT_FALSE(find(flat, "aten::linear")->user_annotation);
  EXPECT_TRUE(find(flat, "aten::linear")->first_nested);  // in the step
  EXPECT_TRUE(find(flat, "aten::addmm")->first_nested);
  EXPECT_FALSE(find(flat, "", "", "", true)->first_nested);  // GPU activities are outside the tree

  EXPECT_FALSE(find(flat, "aten::linear")->first_async);  // its first event (begin 100) ends on its thread

  // A copy ending on another thread begins before one nested in the step: the row is async and
  // nests in nothing, as its first event.
  ModelBuilder c;
  c.range(0, 1000, "ProfilerStep#0", "user_annotation", 1);
  const size_t late = c.range(100, 2000, "aten::copy_", "cpu_op", 2, kRangeAsync);
  c.mutable_model().ranges.end_track[late] = 1;
  c.op(500, 600, "aten::copy_", 3, "");
  const auto copies = key_averages(c.model(), without_python());  // find() points into it
  const KeyAverageRow& copy = *find(copies, "aten::copy_");
  EXPECT_EQ(copy.count, 2u);
  EXPECT_TRUE(copy.first_async);
  EXPECT_FALSE(copy.first_nested);

  const auto with_python = key_averages(b.model(), {});
  EXPECT_FALSE(find(with_python, "train.py(10): main")->first_nested);
  EXPECT_TRUE(find(with_python, "ProfilerStep*")->first_nested);  // in main()
}

// With with_stack, Python functions are rows, and the events' self times exclude the frames
// nested in them, as torch's tree has them.
TEST(KeyAverages, PythonFunctionsAreRowsAndNestLikeEvents) {
  const ModelBuilder b = sample();
  const auto rows = key_averages(b.model(), {});
  EXPECT_EQ(names(rows), (std::vector<std::string>{"train.py(10): main", "ProfilerStep*", "model.py(5): forward",
                                                   "aten::linear", "aten::addmm", "cudaLaunchKernel",
                                                   "util.py(2): helper", "model.py(9): head", ""}));
  const KeyAverageRow& main = *find(rows, "train.py(10): main");
  EXPECT_EQ(main.count, 1u);
  EXPECT_EQ(main.cpu_total_ns, 1000);
  EXPECT_EQ(main.self_cpu_ns, 0);  // ProfilerStep#0 spans it
  EXPECT_EQ(main.device_total_ns, 20 + 100 + 50 + 7);

  EXPECT_EQ(find(rows, "ProfilerStep*")->self_cpu_ns, 1000 - 500 - 300);
  const KeyAverageRow& forward = *find(rows, "model.py(5): forward");
  EXPECT_EQ(forward.self_cpu_ns, 500 - 300 - 200);
  EXPECT_EQ(forward.device_total_ns, 100 + 50 + 7);
  EXPECT_EQ(forward.self_device_ns, 0);
  const KeyAverageRow& helper = *find(rows, "util.py(2): helper");
  EXPECT_EQ(helper.self_cpu_ns, 90);
  EXPECT_EQ(helper.self_device_ns, 7);  // its id is the kernel's external id
  EXPECT_EQ(find(rows, "model.py(9): head")->self_cpu_ns, 300 - 200);
  const KeyAverageRow& linear = *find(rows, "aten::linear");
  EXPECT_EQ(linear.self_cpu_ns, (300 - 200) + (200 - 90) + 200);
  EXPECT_EQ(linear.device_total_ns, 100 + 50 + 7);
  EXPECT_EQ(linear.self_device_ns, 50);
}

TEST(KeyAverages, SelfTimesAddUpToTheOutermostEvents) {
  const ModelBuilder b = sample();
  for (const KeyAverageOptions& options : {KeyAverageOptions{}, without_python()}) {
    int64_t self_cpu = 0;
    for (const KeyAverageRow& row : key_averages(b.model(), options)) self_cpu += row.self_cpu_ns;
    EXPECT_EQ(self_cpu, 1000);  // main() or ProfilerStep#0 covers every nested event
  }
}

// Every step is one ProfilerStep* row; a record_function of the same name as an operator is a
// row of its own (torch keys rows by whether the event is a user annotation too).
TEST(KeyAverages, OneRowForAllSteps) {
  ModelBuilder b;
  b.range(0, 100, "ProfilerStep#3", "user_annotation");
  b.range(10, 20, "aten::mm");
  b.range(100, 180, "ProfilerStep#4", "user_annotation");
  b.range(110, 150, "aten::mm", "user_annotation");
  b.range(200, 230, "ProfilerStep#5", "user_annotation");
  const auto rows = key_averages(b.model(), {});
  ASSERT_EQ(names(rows), (std::vector<std::string>{"ProfilerStep*", "aten::mm", "aten::mm"}));
  EXPECT_EQ(rows[0].count, 3u);
  EXPECT_EQ(rows[0].cpu_total_ns, 100 + 80 + 30);
  EXPECT_EQ(rows[0].self_cpu_ns, 90 + 40 + 30);
  EXPECT_EQ(rows[1].count, 1u);
  EXPECT_EQ(rows[1].cpu_total_ns, 10);
  EXPECT_EQ(rows[2].count, 1u);
  EXPECT_EQ(rows[2].cpu_total_ns, 40);
}

// record_shapes without with_flops: the shapes are there, the FLOPs are not (torch: 0).
TEST(KeyAverages, NoFlopsWithoutWithFlops) {
  const auto rows = key_averages(sample().model(), without_python());
  EXPECT_EQ(find(rows, "aten::addmm")->flops, 0u);
  const auto counted = key_averages(with_flops(sample()).model(), without_python());
  EXPECT_EQ(find(counted, "aten::addmm")->flops, 2u * 8 * 64 * 32);
}

// aten::mul (Scalar) > aten::mul (Tensor) > aten::empty: one mul event with the inner's self
// time, device work and children; the inner's FLOPs are not counted (torch drops the event).
TEST(KeyAverages, NestedSameNameCallIsMergedIntoItsCaller) {
  ModelBuilder b;
  for (int64_t t : {0, 1000}) {
    b.op(t, t + 100, "aten::mul", t + 1, "[[4, 8], []]");
    b.op(t + 10, t + 90, "aten::mul", t + 2, "[[4, 8], [4, 8]]");
    b.op(t + 20, t + 30, "aten::empty", t + 3, "[[], [], [], [], [], []]");
    b.activity(t + 5000, t + 5040, t + 2);
  }
  b.op(2000, 2100, "aten::div_", 10, "");  // two children: nothing merges
  b.op(2010, 2050, "aten::div_", 11, "");
  b.op(2060, 2070, "aten::copy_", 12, "");
  const auto rows = key_averages(with_flops(b).model(), {});
  const KeyAverageRow& mul = *find(rows, "aten::mul");
  EXPECT_EQ(mul.count, 2u);
  EXPECT_EQ(mul.cpu_total_ns, 200);
  EXPECT_EQ(mul.self_cpu_ns, 2 * (100 - 10));
  EXPECT_EQ(mul.self_device_ns, 80);
  EXPECT_EQ(mul.device_total_ns, 80);
  EXPECT_EQ(mul.flops, 2u * 4 * 8);
  EXPECT_EQ(find(rows, "aten::empty")->count, 2u);
  const KeyAverageRow& div = *find(rows, "aten::div_");
  EXPECT_EQ(div.count, 2u);
  EXPECT_EQ(div.self_cpu_ns, (100 - 40 - 10) + 40);

  // Grouped by shapes, the merged event keeps the caller's shapes.
  KeyAverageOptions options;
  options.group_by_input_shape = true;
  const auto shaped = key_averages(b.model(), options);
  EXPECT_EQ(find(shaped, "aten::mul", "[[4, 8], []]")->count, 2u);
  for (const KeyAverageRow& row : shaped) EXPECT_NE(row.input_shapes, "[[4, 8], [4, 8]]");
}

TEST(KeyAverages, GroupsByInputShape) {
  const ModelBuilder b = sample();
  KeyAverageOptions options = without_python();
  options.group_by_input_shape = true;
  const auto rows = key_averages(b.model(), options);
  EXPECT_EQ(names(rows), (std::vector<std::string>{"ProfilerStep*", "aten::linear", "aten::addmm",
                                                   "cudaLaunchKernel", "aten::linear", ""}));
  const KeyAverageRow& big = *find(rows, "aten::linear", "[[8, 64], [32, 64], [32]]");
  EXPECT_EQ(big.count, 3u);
  EXPECT_EQ(big.cpu_total_ns, 300 + 200 + 1300);
  EXPECT_EQ(big.flops, 0u);
  const KeyAverageRow& small = *find(rows, "aten::linear", "[[4, 64], [32, 64], [32]]");
  EXPECT_EQ(small.count, 1u);
  EXPECT_EQ(small.self_cpu_ns, 200);
  EXPECT_EQ(find(rows, "aten::addmm", "[[32], [8, 64], [64, 32], [], []]")->count, 1u);
  EXPECT_EQ(find(rows, "ProfilerStep*", "")->count, 1u);
}

// torch's input_shapes have [] for a tensor list: all cats of two tensors group together.
TEST(KeyAverages, TensorListShapesGroupAsEmpty) {
  ModelBuilder b;
  b.op(0, 10, "aten::cat", 1, "[[[4, 8], [4, 8]], []]");
  b.op(10, 20, "aten::cat", 2, "[[[2, 8], [6, 8]], []]");
  b.op(20, 30, "aten::cat", 3, "[[[4, 8]], [], [3]]");
  KeyAverageOptions options;
  options.group_by_input_shape = true;
  const auto rows = key_averages(b.model(), options);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].input_shapes, "[[], []]");
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[1].input_shapes, "[[], [], [3]]");
}

TEST(KeyAverages, GroupsByInnermostFrames) {
  const ModelBuilder b = sample();
  KeyAverageOptions options;
  options.group_by_stack_n = 1;
  auto rows = key_averages(b.model(), options);
  EXPECT_EQ(find(rows, "ProfilerStep*", "", "train.py(10): main")->count, 1u);
  EXPECT_EQ(find(rows, "aten::linear", "", "model.py(5): forward")->count, 2u);
  // The one ending on another thread began in head() too.
  EXPECT_EQ(find(rows, "aten::linear", "", "model.py(9): head")->count, 2u);
  EXPECT_EQ(find(rows, "aten::addmm", "", "model.py(5): forward")->count, 1u);
  EXPECT_EQ(find(rows, "model.py(5): forward", "", "train.py(10): main")->count, 1u);
  EXPECT_EQ(find(rows, "train.py(10): main", "", "")->count, 1u);

  options.group_by_stack_n = 2;
  options.group_by_input_shape = true;
  rows = key_averages(b.model(), options);
  const KeyAverageRow& linear =
      *find(rows, "aten::linear", "[[8, 64], [32, 64], [32]]", "model.py(5): forward\ntrain.py(10): main");
  EXPECT_EQ(linear.count, 2u);
  EXPECT_EQ(linear.device_total_ns, 157);

  // No Python functions, no stacks.
  options = without_python();
  options.group_by_stack_n = 2;
  EXPECT_EQ(find(key_averages(b.model(), options), "aten::linear")->count, 4u);
}

// Inside a backward function (the node's range in its evaluate_function range) events take the
// stack of the first forward event with the node's sequence number; autograd's own frames are
// left out of stacks.
TEST(KeyAverages, BackwardEventsTakeTheForwardStack) {
  ModelBuilder b;
  b.frame(0, 100, "model.py(5): forward");                        // 0
  const size_t linear = b.op(10, 50, "aten::linear", 1, "");      // 1: sequence 7
  const size_t t = b.op(20, 30, "aten::t", 2, "");                // 2: sequence 7 too, later
  b.frame(200, 500, "train.py(9): step");                         // 3
  b.frame(210, 490, "torch/autograd/__init__.py(255): backward"); // 4: left out
  b.frame(220, 480, "torch/autograd/graph.py(829): _engine_run_backward");  // 5
  b.op(300, 400, "autograd::engine::evaluate_function: AddmmBackward0", 3, "");  // 6
  const size_t node = b.op(310, 390, "AddmmBackward0", 4, "");    // 7
  b.op(320, 380, "aten::mm", 5, "");                              // 8
  b.op(400, 450, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 6, "");  // 9
  const size_t accumulate = b.op(410, 440, "torch::autograd::AccumulateGrad", 7, "");           // 10
  b.op(420, 430, "aten::detach", 8, "");                          // 11
  RangeTable& r = b.mutable_model().ranges;
  r.sequence[linear] = r.sequence[t] = r.sequence[node] = 7;
  r.sequence[accumulate] = -1;

  KeyAverageOptions options;
  options.group_by_stack_n = 2;
  const auto rows = key_averages(b.model(), options);
  EXPECT_EQ(find(rows, "aten::mm", "", "model.py(5): forward")->count, 1u);
  EXPECT_EQ(find(rows, "AddmmBackward0", "", "model.py(5): forward")->count, 1u);
  EXPECT_EQ(find(rows, "autograd::engine::evaluate_function: AddmmBackward0", "",
                 "torch/autograd/graph.py(829): _engine_run_backward\ntrain.py(9): step")->count, 1u);
  // No forward event for a node without sequence number: an empty stack.
  EXPECT_EQ(find(rows, "aten::detach", "", "")->count, 1u);
  EXPECT_EQ(find(rows, "torch::autograd::AccumulateGrad", "", "")->count, 1u);
}

// A record_function range begins inside the Python call entering it and outlives that call: its
// stack has the call (torch takes stacks from where events begin), its parent is the frame
// containing it, and the call's end closes it for what begins later.
TEST(KeyAverages, StackOfARangeOutlivingTheCallThatBeganIt) {
  ModelBuilder b;
  b.frame(0, 100, "train.py(3): step");
  b.frame(10, 20, "torch/autograd/profiler.py(918): __enter__");
  b.frame(12, 18, "<built-in method _record_function_enter_new>");
  b.range(15, 60, "my_block", "user_annotation");
  b.op(30, 40, "aten::mm", 5, "");
  KeyAverageOptions options;
  options.group_by_stack_n = 3;
  auto rows = key_averages(b.model(), options);
  EXPECT_EQ(find(rows, "my_block", "", "<built-in method _record_function_enter_new>\n"
                 "torch/autograd/profiler.py(918): __enter__\ntrain.py(3): step")->count, 1u);
  EXPECT_EQ(find(rows, "aten::mm", "", "train.py(3): step")->count, 1u);

  rows = key_averages(b.model(), {});
  EXPECT_EQ(find(rows, "train.py(3): step")->self_cpu_ns, 100 - 10 - 45);
  EXPECT_EQ(find(rows, "my_block")->self_cpu_ns, 45 - 10);
}

// Allocator events count for every host event they fall in (ends included, any thread), less
// the children's for self; those outside every event form the [memory] row.
TEST(KeyAverages, MemoryOfEventsAndOutsideThem) {
  ModelBuilder b;
  b.range(100, 200, "aten::linear");
  b.range(110, 150, "aten::addmm");
  b.range(300, 400, "aten::relu", "cpu_op", 0, 0, 1);  // another thread
  auto allocate = [&](int64_t t, int64_t bytes, memory::DeviceType type) {
    memory::Allocation a;
    a.time_ns = t;
    a.bytes = bytes;
    a.device = {type, static_cast<int16_t>(type == memory::DeviceType::kCpu ? -1 : 0)};
    b.mutable_model().memory.events.allocations.push_back(a);
  };
  allocate(50, 64, memory::DeviceType::kCpu);     // outside
  allocate(110, 512, memory::DeviceType::kCpu);   // addmm (its begin)
  allocate(150, 1024, memory::DeviceType::kCuda); // addmm (its end)
  allocate(180, -512, memory::DeviceType::kCpu);  // linear
  allocate(250, -32, memory::DeviceType::kCpu);   // outside
  allocate(400, 8, memory::DeviceType::kCpu);     // relu
  const auto rows = key_averages(b.model(), {});
  EXPECT_EQ(names(rows), (std::vector<std::string>{"[memory]", "aten::linear", "aten::addmm", "aten::relu"}));
  const KeyAverageRow& outside = *find(rows, "[memory]");
  EXPECT_EQ(outside.count, 2u);
  EXPECT_EQ(outside.cpu_total_ns, 0);
  EXPECT_EQ(outside.cpu_memory_bytes, 64 - 32);
  EXPECT_EQ(outside.self_cpu_memory_bytes, 64 - 32);
  const KeyAverageRow& linear = *find(rows, "aten::linear");
  EXPECT_EQ(linear.cpu_memory_bytes, 0);
  EXPECT_EQ(linear.self_cpu_memory_bytes, -512);
  EXPECT_EQ(linear.device_memory_bytes, 1024);
  EXPECT_EQ(linear.self_device_memory_bytes, 0);
  const KeyAverageRow& addmm = *find(rows, "aten::addmm");
  EXPECT_EQ(addmm.cpu_memory_bytes, 512);
  EXPECT_EQ(addmm.self_cpu_memory_bytes, 512);
  EXPECT_EQ(addmm.device_memory_bytes, 1024);
  EXPECT_EQ(find(rows, "aten::relu")->cpu_memory_bytes, 8);
}

TEST(KeyAverages, GarbageInputDimsCountNoFlops) {
  ModelBuilder b;
  b.op(0, 10, "aten::mm", 1, "[[8, 64], [64");
  b.op(10, 20, "aten::mm", 2, "[[8, 64], [64, 32]]");
  b.op(20, 30, "aten::mm", 3, "");
  KeyAverageOptions options;
  options.group_by_input_shape = true;
  const auto rows = key_averages(with_flops(b).model(), options);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].input_shapes, "");  // malformed and absent shapes group together
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[0].flops, 0u);
  EXPECT_EQ(rows[1].flops, 2u * 8 * 64 * 32);
}

// Rows come in the order of their first events in time, whatever their threads.
TEST(KeyAverages, RowsInOrderOfFirstEventAcrossThreads) {
  ModelBuilder b;
  b.range(50, 60, "aten::add", "cpu_op", 0, 0, 0);
  b.range(10, 20, "aten::mul", "cpu_op", 0, 0, 1);
  b.range(10, 15, "aten::div", "cpu_op", 0, 0, 1);
  b.range(30, 40, "aten::add", "cpu_op", 0, 0, 1);
  const auto rows = key_averages(b.model(), {});
  EXPECT_EQ(names(rows), (std::vector<std::string>{"aten::mul", "aten::div", "aten::add"}));
}

TEST(KeyAverages, EmptyTrace) {
  const TraceModel model;
  EXPECT_TRUE(key_averages(model, {}).empty());
}

}  // namespace
}  // namespace perfprof
