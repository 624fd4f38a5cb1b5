// The op tree over hand-built traces: event and frame parents, self times, call stacks and the
// device time attributed to ranges through external ids.
#include <gtest/gtest.h>

#include "model_builder.h"

#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/op_tree.h"

namespace perfprof {
namespace {

using test::ModelBuilder;

TEST(OpTree, EventsNestAndSelfTimeExcludesChildEvents) {
  ModelBuilder b;
  const size_t step = b.range(0, 100, "ProfilerStep#1", "user_annotation");
  const size_t linear = b.range(10, 60, "aten::linear");
  const size_t addmm = b.range(20, 50, "aten::addmm");
  const size_t launch = b.range(30, 40, "cudaLaunchKernel", "cuda_runtime");
  const size_t relu = b.range(70, 90, "aten::relu");
  const size_t after = b.range(100, 110, "aten::zeros");  // begins where step ends: a sibling
  const OpTree tree = build_op_tree(b.model());

  EXPECT_EQ(tree.parent_event, (std::vector<int64_t>{-1, 0, 1, 2, 0, -1}));
  EXPECT_EQ(tree.parent_frame, (std::vector<int64_t>{-1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(tree.self_ns[step], 100 - 50 - 20);
  EXPECT_EQ(tree.self_ns[linear], 50 - 30);
  EXPECT_EQ(tree.self_ns[addmm], 30 - 10);
  EXPECT_EQ(tree.self_ns[launch], 10);
  EXPECT_EQ(tree.self_ns[relu], 20);
  EXPECT_EQ(tree.self_ns[after], 10);
}

TEST(OpTree, EqualBeginsNestOuterFirst) {
  ModelBuilder b;
  b.range(0, 50, "outer");
  b.range(0, 50, "same span");
  b.range(0, 20, "inner");
  const OpTree tree = build_op_tree(b.model());
  EXPECT_EQ(tree.parent_event, (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(tree.self_ns, (std::vector<int64_t>{0, 30, 20}));
}

// A frame > X > B (frame) > Y, and A > C (frame) > Z: frames are skipped by event parents,
// events by frame parents.
TEST(OpTree, PythonFramesFormTheirOwnHierarchy) {
  ModelBuilder b;
  const size_t a = b.frame(0, 100, "train.py(12): step");
  const size_t x = b.range(10, 50, "aten::custom");
  const size_t fb = b.frame(20, 40, "fn.py(3): backward");
  const size_t y = b.range(25, 35, "aten::mul");
  const size_t c = b.frame(60, 90, "nn.Module: Linear_0");
  const size_t z = b.range(70, 80, "aten::linear");
  const OpTree tree = build_op_tree(b.model());

  EXPECT_EQ(tree.parent_event, (std::vector<int64_t>{-1, -1, int64_t(x), int64_t(x), -1, -1}));
  EXPECT_EQ(tree.parent_frame,
            (std::vector<int64_t>{-1, int64_t(a), int64_t(a), int64_t(fb), int64_t(a), int64_t(c)}));
  // Events: minus child events only (B's own 10 ns stay in X's self time).
  EXPECT_EQ(tree.self_ns[x], 40 - 10);
  EXPECT_EQ(tree.self_ns[y], 10);
  EXPECT_EQ(tree.self_ns[z], 10);
  // Frames: minus direct children of any kind.
  EXPECT_EQ(tree.self_ns[a], 100 - 40 - 30);
  EXPECT_EQ(tree.self_ns[fb], 20 - 10);
  EXPECT_EQ(tree.self_ns[c], 30 - 10);

  EXPECT_EQ(call_stack_frames(b.model(), tree, y), (std::vector<size_t>{fb, a}));
  EXPECT_EQ(call_stack_frames(b.model(), tree, z), (std::vector<size_t>{c, a}));
  EXPECT_EQ(call_stack_frames(b.model(), tree, fb), (std::vector<size_t>{a}));
  EXPECT_TRUE(call_stack_frames(b.model(), tree, a).empty());
}

TEST(OpTree, AsyncRangesAreLeftOut) {
  ModelBuilder b;
  b.range(0, 100, "outer");
  const size_t async = b.range(10, 200, "handoff", "user_annotation", 0, kRangeAsync);
  const size_t inner = b.range(20, 30, "aten::add");
  const OpTree tree = build_op_tree(b.model());
  EXPECT_EQ(tree.parent_event[async], -1);
  EXPECT_EQ(tree.self_ns[async], 0);
  EXPECT_EQ(tree.parent_event[inner], 0);  // not the async range around it
  EXPECT_EQ(tree.self_ns[0], 90);
}

TEST(OpTree, TracksAreSeparate) {
  ModelBuilder b;
  b.range(0, 100, "main", "cpu_op", 0, 0, 0);
  const size_t other = b.range(10, 20, "worker op", "cpu_op", 0, 0, 1);
  const OpTree tree = build_op_tree(b.model());
  EXPECT_EQ(tree.parent_event[other], -1);
  EXPECT_EQ(tree.self_ns[0], 100);
}

TEST(SameKindParents, EachKindNestsOnItsOwnThroughOtherKindsAndAsyncRows) {
  ModelBuilder b;
  const size_t linear = b.range(0, 100, "aten::linear");
  const size_t scope = b.range(10, 90, "scope", "user_annotation");
  const size_t addmm = b.range(20, 60, "aten::addmm");  // inside linear, through the annotation
  const size_t call = b.frame(30, 120, "train.py(9): step");  // a Python call the annotation crosses
  const size_t async = b.range(35, 200, "handoff", "user_annotation", 0, kRangeAsync);
  const size_t inner = b.frame(40, 50, "inner");         // a Python call in a Python call
  const size_t touching = b.range(100, 110, "aten::zeros");  // begins where linear ends: not inside
  const std::vector<int64_t> parents = same_kind_parents(b.model());
  EXPECT_EQ(parents[linear], -1);
  EXPECT_EQ(parents[scope], -1);
  EXPECT_EQ(parents[addmm], static_cast<int64_t>(linear));
  EXPECT_EQ(parents[call], -1);
  EXPECT_EQ(parents[async], static_cast<int64_t>(scope));  // an async annotation still began inside one
  EXPECT_EQ(parents[inner], static_cast<int64_t>(call));
  EXPECT_EQ(parents[touching], -1);
}

TEST(SameKindParents, EqualRangesNestInRowOrderAndTracksAreSeparate) {
  ModelBuilder b;
  const size_t first = b.range(0, 100, "aten::add");
  const size_t second = b.range(0, 100, "aten::add");
  const size_t empty = b.range(100, 100, "aten::empty");  // zero length, where both end
  const size_t other = b.range(10, 20, "aten::mul", "cpu_op", 0, 0, 1);
  const std::vector<int64_t> parents = same_kind_parents(b.model());
  EXPECT_EQ(parents[first], -1);
  EXPECT_EQ(parents[second], static_cast<int64_t>(first));
  EXPECT_EQ(parents[empty], -1);
  EXPECT_EQ(parents[other], -1);
}

TEST(OpTree, SelfDeviceTimeGoesToTheRangeWithTheExternalId) {
  ModelBuilder b;
  const size_t op = b.range(0, 100, "aten::mm", "cpu_op", 7);
  const size_t frame = b.frame(100, 200, "triton.py(5): launch", 8);
  b.range(200, 300, "no id");
  const size_t async = b.range(300, 400, "async", "cpu_op", 9, kRangeAsync);
  b.activity(1000, 1050, 7);
  b.activity(1100, 1130, 7, GpuActivityKind::Memcpy);
  b.activity(1200, 1204, 7, GpuActivityKind::Memset);
  b.activity(1300, 1500, 7, GpuActivityKind::UserAnnotation);   // not device work
  b.activity(1300, 1500, 7, GpuActivityKind::Synchronization);  // a host wait
  b.activity(2000, 2100, 0);                                    // unlinked
  b.activity(2200, 2300, 42);                                   // no such range
  b.activity(2400, 2500, 9);                                    // async range: ignored
  b.activity(2600, 2700, 8, GpuActivityKind::GraphLaunch);      // a whole graph's work
  std::vector<int64_t> device = self_device_ns(b.model());
  EXPECT_EQ(device[op], 50 + 30 + 4);
  EXPECT_EQ(device[frame], 100);
  EXPECT_EQ(device[async], 0);
}

}  // namespace
}  // namespace perfprof
