// torch.profiler's function-event tree over hand-built traces: nesting with Python frames, partly
// overlapping and cross-thread ranges, the ops torch drops, and the merge of a nested call of
// the same name (EventList._remove_dup_nodes), with its times and device work.
#include <gtest/gtest.h>

#include "model_builder.h"

#include <vector>

#include "analysis/function_events.h"

namespace perfprof {
namespace {

using test::ModelBuilder;
constexpr FunctionEventKind kNone = FunctionEventKind::kNone;
constexpr FunctionEventKind kNested = FunctionEventKind::kNested;
constexpr FunctionEventKind kMerged = FunctionEventKind::kMerged;
constexpr FunctionEventKind kAsync = FunctionEventKind::kAsync;

// ProfilerStep#0 > train.py frame > aten::linear > aten::addmm; Python frames are events.
TEST(FunctionEvents, PythonFramesNestLikeEvents) {
  ModelBuilder b;
  b.range(0, 100, "ProfilerStep#0", "user_annotation");  // 0
  b.frame(10, 90, "train.py(3): step");                    // 1
  b.range(20, 80, "aten::linear");                         // 2
  b.frame(30, 40, "util.py(8): helper");                   // 3
  b.range(50, 70, "aten::addmm");                          // 4
  FunctionEvents events = build_function_events(b.model(), true);
  EXPECT_EQ(events.kind, (std::vector<FunctionEventKind>{kNested, kNested, kNested, kNested, kNested}));
  EXPECT_EQ(events.parent, (std::vector<int64_t>{-1, 0, 1, 2, 2}));
  EXPECT_EQ(events.self_ns, (std::vector<int64_t>{100 - 80, 80 - 60, 60 - 10 - 20, 10, 20}));

  // Without them the operators nest in each other directly.
  events = build_function_events(b.model(), false);
  EXPECT_EQ(events.kind, (std::vector<FunctionEventKind>{kNested, kNone, kNested, kNone, kNested}));
  EXPECT_EQ(events.parent, (std::vector<int64_t>{-1, -1, 0, -1, 2}));
  EXPECT_EQ(events.self_ns, (std::vector<int64_t>{100 - 60, 0, 60 - 20, 0, 20}));
}

// aten::mul > aten::mul > {aten::empty, aten::fill_}: the inner mul, its parent's only child,
// is merged; its children become the outer mul's, its time the outer's self time.
TEST(FunctionEvents, NestedCallOfTheSameNameMergesIntoItsParent) {
  ModelBuilder b;
  b.range(0, 100, "aten::mul", "cpu_op", 1);    // 0
  b.range(10, 90, "aten::mul", "cpu_op", 2);    // 1
  b.range(20, 30, "aten::empty", "cpu_op", 3);  // 2
  b.range(40, 60, "aten::fill_", "cpu_op", 4);  // 3
  b.activity(500, 540, 2);  // launched by the inner mul
  b.activity(600, 605, 4);  // by fill_
  const FunctionEvents events = build_function_events(b.model(), true);
  EXPECT_EQ(events.kind, (std::vector<FunctionEventKind>{kNested, kMerged, kNested, kNested}));
  EXPECT_EQ(events.enclosing, (std::vector<int64_t>{-1, 0, 1, 1}));
  EXPECT_EQ(events.parent, (std::vector<int64_t>{-1, 0, 0, 0}));
  EXPECT_EQ(events.self_ns, (std::vector<int64_t>{100 - 10 - 20, 0, 10, 20}));
  EXPECT_EQ(events.self_device_ns, (std::vector<int64_t>{40, 0, 0, 5}));
  EXPECT_EQ(events.device_total_ns, (std::vector<int64_t>{45, 0, 0, 5}));
}

// A chain of one name collapses into its top; a call with a sibling, or under a parent of
// another name, stays.
TEST(FunctionEvents, MergingRepeatsDownAChainAndNeedsAnOnlyChild) {
  ModelBuilder b;
  b.range(0, 100, "aten::div_");   // 0
  b.range(10, 90, "aten::div_");   // 1: merged
  b.range(20, 80, "aten::div_");   // 2: merged (its parent is now 0, with one child)
  b.range(30, 40, "aten::div_");   // 3: has a sibling: stays
  b.range(50, 60, "aten::copy_");  // 4
  b.range(200, 300, "aten::to");   // 5
  b.range(210, 290, "aten::_to_copy");  // 6
  b.range(220, 280, "aten::to");   // 7: its parent's name differs: stays
  const FunctionEvents events = build_function_events(b.model(), true);
  EXPECT_EQ(events.kind, (std::vector<FunctionEventKind>{kNested, kMerged, kMerged, kNested, kNested, kNested, kNested, kNested}));
  EXPECT_EQ(events.parent, (std::vector<int64_t>{-1, 0, 0, 0, 0, -1, 5, 6}));
  EXPECT_EQ(events.self_ns[0], 100 - 10 - 10);
}

// Numbered steps are one name: a step nesting in a step (never seen) would merge too.
TEST(FunctionEvents, ProfilerStepsShareOneName) {
  ModelBuilder b;
  const size_t step = b.range(0, 10, "ProfilerStep#7", "user_annotation");
  const size_t op = b.range(0, 10, "ProfilerStep", "cpu_op");
  EXPECT_EQ(event_name(b.model(), step), "ProfilerStep*");
  EXPECT_EQ(event_name(b.model(), op), "ProfilerStep");
  // A step is what the schedule recorded as one, not a name: a record_function named like a
  // step stays itself.
  const size_t look_alike = b.range(20, 30, "ProfilerStep#8", "user_annotation");
  b.mutable_model().ranges.kind[look_alike] = RangeKind::UserAnnotation;
  EXPECT_EQ(event_name(b.model(), look_alike), "ProfilerStep#8");
}

// A range overlapping its predecessor partly nests in what contains it; one ending on another
// thread is async; the helper ops torch drops are not events, their children nest around them.
TEST(FunctionEvents, OverlapsCrossThreadRangesAndDroppedOps) {
  ModelBuilder b;
  b.range(0, 100, "outer");                                       // 0
  b.range(10, 50, "first");                                       // 1
  b.range(40, 70, "overlaps first", "cpu_op", 0, kRangeAsync);    // 2: flagged, but one thread
  b.range(45, 48, "inside both");                                 // 3
  b.range(60, 65, "inside overlap");                              // 4
  b.range(75, 95, "aten::output_nr");                             // 5: dropped
  b.range(80, 85, "aten::empty");                                 // 6
  const size_t cross = b.range(90, 300, "cross-thread", "cpu_op", 0, kRangeAsync);  // 7
  b.mutable_model().ranges.end_track[cross] = 1;
  const FunctionEvents events = build_function_events(b.model(), true);
  EXPECT_EQ(events.kind, (std::vector<FunctionEventKind>{kNested, kNested, kNested, kNested, kNested, kNone, kNested, kAsync}));
  EXPECT_EQ(events.parent, (std::vector<int64_t>{-1, 0, 0, 2, 2, -1, 0, -1}));
  EXPECT_EQ(events.self_ns, (std::vector<int64_t>{100 - 40 - 30 - 5, 40, 30 - 3 - 5, 3, 5, 0, 5, 0}));
}

// A left-out frame overlapping an event partly closes nothing: what follows still nests in the
// event, as in torch, where the frame does not exist.
TEST(FunctionEvents, RangesThatAreNoEventsCloseNone) {
  ModelBuilder b;
  b.range(0, 100, "aten::linear", "cpu_op", 1);  // 0
  b.frame(50, 150, "hook.py(3): hook", 2);       // 1: overlaps the linear's end
  b.range(60, 70, "aten::addmm", "cpu_op", 3);    // 2
  b.activity(500, 510, 2);                        // launched from the frame, inside the linear
  const FunctionEvents events = build_function_events(b.model(), false);
  EXPECT_EQ(events.kind, (std::vector<FunctionEventKind>{kNested, kNone, kNested}));
  EXPECT_EQ(events.parent, (std::vector<int64_t>{-1, -1, 0}));
  EXPECT_EQ(events.enclosing, (std::vector<int64_t>{-1, -1, 0}));  // the frame is in no event
  EXPECT_EQ(events.self_ns, (std::vector<int64_t>{90, 0, 10}));
  EXPECT_EQ(events.self_device_ns, (std::vector<int64_t>{0, 0, 0}));
}

TEST(FunctionEvents, TracksNestSeparately) {
  ModelBuilder b;
  b.range(0, 100, "aten::mul", "cpu_op", 0, 0, 0);
  b.range(10, 20, "aten::mul", "cpu_op", 0, 0, 1);  // same name, another thread: no parent
  const FunctionEvents events = build_function_events(b.model(), true);
  EXPECT_EQ(events.kind, (std::vector<FunctionEventKind>{kNested, kNested}));
  EXPECT_EQ(events.parent, (std::vector<int64_t>{-1, -1}));
}

}  // namespace
}  // namespace perfprof
