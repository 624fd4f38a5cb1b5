// Folded-stack export (exact file text, rounding, totals, failures) and the op annotations
// (call stacks and FLOPs in args).
#include <gtest/gtest.h>

#include "model_builder.h"

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/op_annotations.h"
#include "export/folded_stacks.h"
#include "test_util.h"

namespace perfprof {
namespace {

using test::TempDir;

using test::ModelBuilder;

constexpr std::string_view kMmShapes = "[[8, 64], [64, 32]]";

// main > ProfilerStep#0 > forward() > linear > addmm > cudaLaunchKernel
//                                   > linear > helper()
//                       > head() > linear
//                       > empty (too short to show)
ModelBuilder sample() {
  ModelBuilder b;
  b.frame(0, 10000, "main.py(1): <module>");                             // 0
  b.range(0, 10000, "ProfilerStep#0", "user_annotation", 1);              // 1
  b.frame(1000, 6000, "model.py(5): forward");                            // 2
  b.op(1000, 4000, "aten::linear", 3, "");                                // 3
  b.op(1500, 3500, "aten::addmm", 4, "");                                 // 4
  b.range(2000, 2500, "cudaLaunchKernel", "cuda_runtime", 5);             // 5
  b.op(4000, 6000, "aten::linear", 6, "");                                // 6
  b.frame(4100, 5000, "util.py(2): helper", 10);                          // 7
  b.frame(6000, 9000, "model.py(9): head;x\nnewline");                    // 8
  b.op(6500, 8499, "aten::linear", 9, "");                                // 9
  b.op(9000, 9499, "aten::empty", 12, "");                                // 10
  b.range(9600, 20000, "aten::linear", "cpu_op", 11, kRangeAsync);        // 11
  b.activity(50000, 51500, 4);
  b.activity(52000, 54000, 6);
  b.activity(55000, 56000, 1, GpuActivityKind::Memcpy);
  b.activity(57000, 57700, 10);  // launched from helper(), inside the second linear
  b.activity(58000, 68000, 11);  // the async range's: ignored
  b.activity(58000, 68000, 1, GpuActivityKind::UserAnnotation);
  return b;
}

std::string folded(const TraceModel& model, FoldedMetric metric, const std::string& name = "stacks.txt") {
  TempDir dir;
  const std::string path = dir.file(name);
  write_folded_stacks(model, build_op_tree(model), path, metric);
  return name.size() > 3 && name.substr(name.size() - 3) == ".gz" ? test::read_gzip_file(path)
                                                                   : test::read_file(path);
}

int64_t total_of(const std::string& text) {
  std::istringstream lines(text);
  int64_t total = 0;
  for (std::string line; std::getline(lines, line);) total += std::stoll(line.substr(line.rfind(' ') + 1));
  return total;
}

TEST(FoldedStacks, SelfCpuText) {
  // The step is at the root of the stacks inside it. Self times: step 10000 - 3000 - 2000 - 1999 - 499 = 2502; linears 1000 + 2000 on one stack;
  // addmm 1500 (rounds up); launch 500 (rounds up); head's linear 1999; empty 499 (dropped).
  EXPECT_EQ(folded(sample().model(), FoldedMetric::SelfCpu),
            "ProfilerStep#0;main.py(1): <module>;model.py(5): forward;aten::linear 3\n"
            "ProfilerStep#0;main.py(1): <module>;model.py(5): forward;aten::linear;aten::addmm 2\n"
            "ProfilerStep#0;main.py(1): <module>;model.py(5): forward;aten::linear;aten::addmm;cudaLaunchKernel 1\n"
            "ProfilerStep#0;main.py(1): <module>;model.py(9): head:x newline;aten::linear 2\n"
            "main.py(1): <module>;ProfilerStep#0 3\n");
}

TEST(FoldedStacks, SelfDeviceText) {
  // helper() launched its kernel itself: it gets a line, under the events around it.
  EXPECT_EQ(folded(sample().model(), FoldedMetric::SelfDevice),
            "ProfilerStep#0;main.py(1): <module>;model.py(5): forward;aten::linear 2\n"
            "ProfilerStep#0;main.py(1): <module>;model.py(5): forward;aten::linear;aten::addmm 2\n"
            "ProfilerStep#0;main.py(1): <module>;model.py(5): forward;aten::linear;util.py(2): helper 1\n"
            "main.py(1): <module>;ProfilerStep#0 1\n");
}

TEST(FoldedStacks, Gzip) {
  EXPECT_EQ(folded(sample().model(), FoldedMetric::SelfCpu, "stacks.txt.gz"),
            folded(sample().model(), FoldedMetric::SelfCpu));
}

TEST(FoldedStacks, TotalsEqualTheSumOfSelfTimes) {
  // Whole microseconds, so rounding cannot move the total; two tracks, a recursion, repeats.
  ModelBuilder b;
  b.frame(0, 90000, "a.py(1): f", 100);
  b.op(1000, 50000, "aten::outer", 1, "");
  b.op(2000, 30000, "aten::outer", 2, "");  // recursive: its own line
  b.op(3000, 7000, "aten::mm", 3, "");
  b.op(8000, 9000, "aten::mm", 4, "");
  b.op(60000, 61000, "aten::mm", 5, "");
  b.range(0, 5000, "worker op", "cpu_op", 6, 0, 1);
  b.activity(100, 3100, 3);
  b.activity(200, 1200, 2);
  b.activity(300, 2300, 100);
  b.activity(400, 1400, 6);
  const TraceModel& model = b.model();
  const OpTree tree = build_op_tree(model);

  int64_t self_cpu = 0;
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    if (is_event(model, i)) self_cpu += tree.self_ns[i];
  }
  EXPECT_EQ(self_cpu, 49000 + 1000 + 5000);
  EXPECT_EQ(total_of(folded(model, FoldedMetric::SelfCpu)) * 1000, self_cpu);
  EXPECT_EQ(total_of(folded(model, FoldedMetric::SelfDevice)) * 1000, 3000 + 1000 + 2000 + 1000);
}

TEST(FoldedStacks, EmptyTraceWritesAnEmptyFile) {
  EXPECT_EQ(folded(TraceModel{}, FoldedMetric::SelfCpu), "");
}

TEST(FoldedStacks, FailedWriteThrowsAndLeavesNothing) {
  TempDir dir;
  const std::string missing = dir.file("no/such/dir/stacks.txt");
  const ModelBuilder b = sample();
  const OpTree tree = build_op_tree(b.model());
  try {
    write_folded_stacks(b.model(), tree, missing, FoldedMetric::SelfCpu);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  // A directory in the way: the temporary file is written, the rename fails and is cleaned up.
  const std::string in_the_way = dir.file("stacks");
  std::filesystem::create_directory(in_the_way);
  EXPECT_THROW(write_folded_stacks(b.model(), tree, in_the_way, FoldedMetric::SelfCpu), std::runtime_error);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"stacks"}));
}

TEST(AnnotateFlops, AppendsFlopsToTheOperatorsThatHaveACount) {
  ModelBuilder b;
  b.frame(0, 1000, "a.py(1): f");
  const size_t mm = b.op(10, 100, "aten::mm", 1, kMmShapes);
  const size_t relu = b.op(100, 200, "aten::relu", 2, "");
  const size_t mm_again = b.op(200, 300, "aten::mm", 3, kMmShapes);
  const size_t note = b.range(300, 400, "note", "user_annotation", 4, 0, 0, kMmShapes);
  const size_t bad = b.op(400, 450, "aten::mm", 5, "[[8, 64], [64");
  TraceModel& model = b.mutable_model();
  const TraceModel before = model;

  annotate_flops(model);
  ArgSet expected = before.args(before.ranges.args[mm]);
  expected.args.push_back({ArgKey::Flops, int64_t{32768}});
  EXPECT_EQ(model.args(model.ranges.args[mm]), expected);
  EXPECT_EQ(range_flops(model, mm), 32768u);
  EXPECT_EQ(model.ranges.args[mm_again], model.ranges.args[mm]);  // one set for one signature
  EXPECT_EQ(model.arg_sets.size(), before.arg_sets.size() + 1);
  EXPECT_EQ(model.strings, before.strings);
  for (const size_t unchanged : {relu, note, bad}) {  // no count, not an operator, unreadable shapes
    EXPECT_EQ(model.ranges.args[unchanged], before.ranges.args[unchanged]) << unchanged;
  }
}

}  // namespace
}  // namespace perfprof
