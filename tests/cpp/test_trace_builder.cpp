#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <unistd.h>
#include <vector>

#include "test_util.h"
#include "analysis/profiler_steps.h"
#include "capture/live_capture.h"
#include "trace/trace_builder.h"

namespace perfprof {
namespace {

using test::begin_event;
using test::counter_event;
using test::end_event;
using test::instant_event;
using test::int_arg;
using test::thread_events;

constexpr CollectionWindow kWindow{0, 1'000'000};

TraceModel build(std::vector<ThreadEvents> threads, CollectionWindow window = kWindow,
                 uint64_t dropped = 0) {
  CollectedEvents collected;
  collected.threads = std::move(threads);
  collected.dropped_events = dropped;
  return build_trace(capture_of_this_process(std::move(collected), {}, window));
}

// Row of the range called `name`; fails the test if there is not exactly one.
size_t range_named(const TraceModel& model, const std::string& name) {
  size_t found = SIZE_MAX;
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    if (model.str(model.ranges.name[i]) != name) continue;
    EXPECT_EQ(found, SIZE_MAX) << "two ranges named " << name;
    found = i;
  }
  EXPECT_NE(found, SIZE_MAX) << "no range named " << name;
  return found;
}

struct ExpectedRange {
  int64_t begin_ns, end_ns;
  uint32_t track, end_track;
  uint8_t flags;
};

void expect_range(const TraceModel& model, const std::string& name, const ExpectedRange& expected) {
  const size_t i = range_named(model, name);
  if (i == SIZE_MAX) return;
  const RangeTable& r = model.ranges;
  EXPECT_EQ(r.begin_ns[i], expected.begin_ns) << name;
  EXPECT_EQ(r.end_ns[i], expected.end_ns) << name;
  EXPECT_EQ(r.track[i], expected.track) << name;
  EXPECT_EQ(r.end_track[i], expected.end_track) << name;
  EXPECT_EQ(+r.flags[i], +expected.flags) << name;
}

TEST(TraceBuilder, PairsNestedRangesOnOneThread) {
  const TraceModel model = build({thread_events(0, 101, "main",
                                                {begin_event(100, 1, "outer", "user_annotation", int_arg(ArgKey::Stream, 1)),
                                                 begin_event(200, 2, "inner"),
                                                 end_event(300, 2),
                                                 end_event(400, 1)})});
  ASSERT_EQ(model.ranges.size(), 2u);
  expect_range(model, "outer", {100, 400, 0, 0, 0});
  expect_range(model, "inner", {200, 300, 0, 0, 0});
  const size_t outer = range_named(model, "outer");
  EXPECT_EQ(model.ranges.kind[outer], RangeKind::UserAnnotation);
  EXPECT_EQ(model.args(model.ranges.args[outer]), int_arg(ArgKey::Stream, 1));
  EXPECT_EQ(model.ranges.id[outer], 1u);
  EXPECT_EQ(model.stats.async_ranges, 0u);
  EXPECT_EQ(model.stats.unfinished_ranges, 0u);
  EXPECT_EQ(model.stats.unmatched_range_ends, 0u);
}

TEST(TraceBuilder, EveryRangeGetsTheKindItsCategoryNames) {
  const TraceModel model = build({thread_events(
      0, 1, "main",
      {begin_event(100, 1, "aten::mm", "cpu_op"), end_event(200, 1), begin_event(300, 2, "step", "user_annotation"),
       end_event(400, 2), begin_event(500, 3, "f", "python_function"), end_event(600, 3),
       begin_event(700, 4, "custom", "something else"), end_event(800, 4)})});
  std::vector<RangeKind> kinds(model.ranges.kind.begin(), model.ranges.kind.end());
  EXPECT_EQ(kinds, (std::vector<RangeKind>{RangeKind::CpuOp, RangeKind::UserAnnotation, RangeKind::PythonFunction,
                                          RangeKind::Other}));
}

TEST(TraceBuilder, RangeEndedOnAnotherThreadIsAsync) {
  // Both orders: the ending thread's events are read after, or before, the beginning thread's.
  for (const uint32_t ender_index : {1u, 0u}) {
    const uint32_t beginner_index = 1 - ender_index;
    const TraceModel model =
        build({thread_events(beginner_index, 201, "beginner",
                             {begin_event(100, 7, "handoff"), begin_event(150, 8, "local"),
                              end_event(160, 8)}),
               thread_events(ender_index, 202, "ender", {end_event(500, 7)})});
    ASSERT_EQ(model.ranges.size(), 2u);
    expect_range(model, "handoff", {100, 500, beginner_index, ender_index, kRangeAsync});
    expect_range(model, "local", {150, 160, beginner_index, beginner_index, 0});
    EXPECT_EQ(model.stats.async_ranges, 1u);
    EXPECT_EQ(model.stats.unmatched_range_ends, 0u);
  }
}

TEST(TraceBuilder, ImproperlyNestedRangeBecomesAsync) {
  const TraceModel model = build({thread_events(0, 101, "main",
                                                {begin_event(100, 1, "A"), begin_event(200, 2, "B"),
                                                 end_event(300, 1), end_event(400, 2),
                                                 begin_event(500, 3, "C"), begin_event(550, 4, "D"),
                                                 end_event(560, 4), end_event(600, 3)})});
  ASSERT_EQ(model.ranges.size(), 4u);
  expect_range(model, "A", {100, 300, 0, 0, 0});
  expect_range(model, "B", {200, 400, 0, 0, kRangeAsync});
  expect_range(model, "C", {500, 600, 0, 0, 0});
  expect_range(model, "D", {550, 560, 0, 0, 0});
  EXPECT_EQ(model.stats.async_ranges, 1u);
  EXPECT_EQ(model.stats.unmatched_range_ends, 0u);
}

TEST(TraceBuilder, UnfinishedRangeEndsAtWindowEnd) {
  const TraceModel model =
      build({thread_events(0, 101, "main",
                           {begin_event(100, 1, "open"), begin_event(200, 2, "closed"),
                            end_event(300, 2)})},
            {0, 5000});
  ASSERT_EQ(model.ranges.size(), 2u);
  expect_range(model, "open", {100, 5000, 0, 0, kRangeUnfinished});
  expect_range(model, "closed", {200, 300, 0, 0, 0});
  EXPECT_EQ(model.stats.unfinished_ranges, 1u);
}

// The end of a step the profiler stopped in, as Recorder::end_recorded_step(id, true) writes it.
RawEvent step_end_at_stop(int64_t ts_ns, uint64_t id) {
  RawEvent event = end_event(ts_ns, id);
  event.range_kind = RangeKind::Step;
  set_step_ended_by_stop(event, true);
  return event;
}

TEST(TraceBuilder, TheStepTheProfilerStoppedInIsTheTailNotAStep) {
  const TraceModel model = build({thread_events(
      0, 101, "main",
      {begin_event(100, 1, "ProfilerStep#0", "user_annotation"), end_event(200, 1),
       begin_event(200, 2, "ProfilerStep#1", "user_annotation"), end_event(300, 2),
       begin_event(300, 3, "ProfilerStep#2", "user_annotation"), step_end_at_stop(450, 3)})});
  expect_range(model, "ProfilerStep#1", {200, 300, 0, 0, 0});
  expect_range(model, "ProfilerStep#2", {300, 450, 0, 0, kRangeStepTail});  // kept in the trace
  std::vector<std::string> steps;
  for (const ProfilerStep& step : profiler_steps(model)) steps.push_back(step.number);
  EXPECT_EQ(steps, (std::vector<std::string>{"0", "1"}));
  const std::vector<ProfilerStep> ranges = profiler_step_ranges(model);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_TRUE(ranges[2].finished && ranges[2].stopped_in && !ranges[2].is_step());
}

TEST(TraceBuilder, AStepStillRunningWhenRecordingEndedIsNoStep) {
  const TraceModel model =
      build({thread_events(0, 101, "main",
                           {begin_event(100, 1, "ProfilerStep#0", "user_annotation"), end_event(200, 1),
                            begin_event(200, 2, "ProfilerStep#1", "user_annotation")})},
            {0, 5000});
  ASSERT_EQ(profiler_steps(model).size(), 1u);
  EXPECT_EQ(profiler_steps(model)[0].number, "0");
  EXPECT_EQ(profiler_step_ranges(model).size(), 2u);
}

TEST(TraceBuilder, EndWithoutBeginIsCounted) {
  const TraceModel model = build({thread_events(0, 101, "main", {end_event(100, 99)}),
                                  thread_events(1, 102, "other", {end_event(150, 98)})});
  EXPECT_EQ(model.ranges.size(), 0u);
  EXPECT_EQ(model.stats.unmatched_range_ends, 2u);
}

TEST(TraceBuilder, DropsEventsBeforeTheWindow) {
  const TraceModel model = build({thread_events(0, 101, "main",
                                                {begin_event(500, 1, "warm-up straggler"),
                                                 instant_event(900, "early tick"),
                                                 end_event(1500, 1),
                                                 begin_event(2000, 2, "kept"),
                                                 end_event(3000, 2)})},
                                 {1000, 5000});
  EXPECT_EQ(model.stats.events_before_window, 2u);
  ASSERT_EQ(model.ranges.size(), 1u);
  expect_range(model, "kept", {2000, 3000, 0, 0, 0});
  EXPECT_EQ(model.instants.size(), 0u);
  EXPECT_EQ(model.stats.unmatched_range_ends, 1u);  // the straggler's end
  EXPECT_EQ(model.window_begin_ns, 1000);
  EXPECT_EQ(model.window_end_ns, 5000);
}

// Issue 33 point 4: CUPTI stamps 0 the kernels it had no device memory to time, and another
// client's clock lands far past the window; both were kept (any end after the window's begin
// was), stretching every GPU time. Work the warm-up left over is dropped too: all counted.
TEST(TraceBuilder, GpuRecordsAreKeptOnlyWithTimestampsOfTheWindow) {
  GpuInput gpu;
  gpu.collected_any = true;
  const auto kernel = [](int64_t start_ns, int64_t end_ns, uint32_t correlation) {
    GpuActivity a;
    a.start_ns = start_ns;
    a.end_ns = end_ns;
    a.correlation = correlation;
    return a;
  };
  gpu.collected.activities = {kernel(2000, 2500, 1),  // inside
                              kernel(900, 1100, 2),   // begun in the warm-up, ends inside: kept
                              kernel(0, 0, 3),        // not timed
                              kernel(3000, 2000, 4),  // ends before it starts
                              kernel(int64_t{1} << 61, (int64_t{1} << 61) + 500, 5),  // another clock
                              kernel(500, 800, 6),    // the warm-up's
                              kernel(6000, 6500, 7),  // launched at 4000, queued: kept
                              kernel(7000, 7500, 8)}; // launched in the warm-up: not after the window
  gpu.collected.api_calls = {ApiCall{false, 211, kEmptyString, 1500, 1600, 101, 1},
                             ApiCall{false, 211, kEmptyString, 0, 0, 101, 3},
                             ApiCall{false, 211, kEmptyString, 400, 450, 101, 6},
                             ApiCall{false, 211, kEmptyString, 4000, 4100, 101, 7},
                             ApiCall{false, 211, kEmptyString, 600, 700, 101, 8}};
  const TraceModel model = build_trace(capture_of_this_process({}, std::move(gpu), {1000, 5000}));
  std::vector<uint32_t> kept;
  for (const GpuActivity& a : model.gpu.activities) kept.push_back(a.correlation);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<uint32_t>{1, 2, 7}));
  EXPECT_EQ(model.stats.gpu_records_outside_window, 5u);  // 3, 4, 5, 8 and the untimed call
  EXPECT_EQ(model.stats.events_before_window, 3u);        // the warm-up's kernel and calls
  ASSERT_EQ(model.ranges.size(), 2u);
  EXPECT_EQ(model.ranges.begin_ns[0], 1500);
  EXPECT_EQ(model.ranges.begin_ns[1], 4000);
}

TEST(TraceBuilder, InstantsAndCountersLandInTheirTables) {
  const TraceModel model = build(
      {thread_events(0, 101, "main",
                     {instant_event(100, "tick", "user_annotation", int_arg(ArgKey::Stream, 1)),
                      counter_event(200, "memory", 1234.5)}),
       thread_events(1, 102, "sampler",
                     {counter_event(300, "memory", -0.1), counter_event(400, "huge", 1e300)})});
  ASSERT_EQ(model.instants.size(), 1u);
  EXPECT_EQ(model.instants.ts_ns[0], 100);
  EXPECT_EQ(model.str(model.instants.name[0]), "tick");
  EXPECT_EQ(model.instants.kind[0], RangeKind::UserAnnotation);
  EXPECT_EQ(model.args(model.instants.args[0]), int_arg(ArgKey::Stream, 1));
  EXPECT_EQ(model.instants.track[0], 0u);

  const CounterTable& c = model.counters;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.ts_ns, (std::vector<int64_t>{200, 300, 400}));
  EXPECT_EQ(c.value, (std::vector<double>{1234.5, -0.1, 1e300}));
  EXPECT_EQ(c.track, (std::vector<uint32_t>{0, 1, 1}));
  EXPECT_EQ(model.str(c.name[0]), "memory");
  EXPECT_EQ(model.str(c.name[2]), "huge");
  EXPECT_EQ(model.ranges.size(), 0u);
}

CompletedRange completed(int64_t os_tid, int64_t begin_ns, int64_t end_ns, const char* name, int64_t sequence = -1) {
  CompletedRange range{os_tid, begin_ns, end_ns, test::intern(name),
                       global_arg_sets().intern(test::input_dims_arg("[[2, 3]]")), sequence};
  range.kind = RangeKind::CpuOp;
  return range;
}

TEST(TraceBuilder, CompletedRangesJoinTheirThreadAndNestWithItsRanges) {
  CollectedEvents collected;
  collected.threads = {thread_events(0, 101, "main", {begin_event(100, 1, "step"), end_event(900, 1)})};
  collected.completed = {completed(101, 300, 400, "inner op", 7), completed(101, 200, 500, "outer op"),
                         completed(202, 250, 260, "engine op"),
                         completed(101, -50, 10, "before the window")};
  const TraceModel model = build_trace(capture_of_this_process(std::move(collected), {}, kWindow));
  expect_range(model, "step", {100, 900, 0, 0, 0});
  expect_range(model, "outer op", {200, 500, 0, 0, 0});
  expect_range(model, "inner op", {300, 400, 0, 0, 0});
  expect_range(model, "engine op", {250, 260, 1, 1, 0});  // a thread that recorded nothing itself
  EXPECT_EQ(model.threads[1].os_tid, 202);
  EXPECT_EQ(model.ranges.sequence[range_named(model, "inner op")], 7);
  EXPECT_EQ(model.args(model.ranges.args[range_named(model, "inner op")]), test::input_dims_arg("[[2, 3]]"));
  EXPECT_EQ(model.ranges.size(), 4u);  // the one before the window is dropped
  EXPECT_EQ(model.stats.async_ranges, 0u);
}

// What torch.profiler's record_function looks like under with_stack: the annotation begins inside
// the Python call of __enter__ and ends inside that of __exit__.
TEST(TraceBuilder, EventsCrossingPythonFramesNestAndTheFramesBecomeAsync) {
  const TraceModel model = build({thread_events(
      0, 101, "main",
      {begin_event(0, 1, "wrapper", "python_function"), begin_event(100, 2, "__enter__", "python_function"),
       begin_event(150, 3, "enter builtin", "python_function"), begin_event(200, 4, "Optimizer.step", "user_annotation"),
       end_event(250, 3), end_event(300, 2), begin_event(350, 5, "step", "python_function"),
       begin_event(400, 6, "aten::add", "cpu_op"), end_event(500, 6), end_event(700, 5),
       begin_event(750, 7, "__exit__", "python_function"), begin_event(780, 8, "exit builtin", "python_function"),
       end_event(800, 4), end_event(850, 8), end_event(900, 7), end_event(1000, 1)})});
  for (const char* nested : {"wrapper", "Optimizer.step", "step", "aten::add"}) {
    EXPECT_EQ(+model.ranges.flags[range_named(model, nested)], 0) << nested;
  }
  for (const char* crossing : {"__enter__", "enter builtin", "__exit__", "exit builtin"}) {
    EXPECT_EQ(+model.ranges.flags[range_named(model, crossing)], +kRangeAsync) << crossing;
  }
  EXPECT_EQ(model.stats.async_ranges, 4u);
  expect_range(model, "Optimizer.step", {200, 800, 0, 0, 0});  // times untouched
}

TEST(TraceBuilder, AnEventCrossingAnotherEventIsTheOneMadeAsync) {
  // The frame between them does not change that: only Python frames give way.
  const TraceModel model = build({thread_events(
      0, 101, "main",
      {begin_event(100, 1, "outer op", "cpu_op"), begin_event(150, 2, "frame", "python_function"),
       begin_event(200, 3, "crossing op", "cpu_op"), end_event(250, 2), end_event(300, 1), end_event(400, 3)})});
  expect_range(model, "outer op", {100, 300, 0, 0, 0});
  expect_range(model, "frame", {150, 250, 0, 0, 0});
  expect_range(model, "crossing op", {200, 400, 0, 0, kRangeAsync});
  EXPECT_EQ(model.stats.async_ranges, 1u);
}

CompletedRange imported(int64_t begin_ns, int64_t end_ns, const char* name) {
  CompletedRange range = completed(101, begin_ns, end_ns, name);
  range.imported = true;
  return range;
}

// torch's times come through its Unix clock and are a few tens of nanoseconds off perfprof's:
// an operator then seems to end just after the Python call that made it.
TEST(TraceBuilder, ImportedRangesEndingJustAfterTheirParentEndWithIt) {
  CollectedEvents collected;
  collected.threads = {thread_events(0, 101, "main",
                                     {begin_event(1'000, 1, "<built-in method item>", "python_function"),
                                      end_event(2'000, 1),
                                      begin_event(10'000, 2, "__enter__", "python_function"),
                                      end_event(12'000, 2),
                                      begin_event(13'500, 3, "__exit__", "python_function"),
                                      end_event(14'300, 3)})};
  // The annotation crosses __enter__ by 2 us and __exit__ by 300 ns: both really.
  collected.completed = {imported(1'450, 2'030, "aten::item"), imported(1'900, 2'006, "aten::_local_scalar_dense"),
                         imported(11'000, 14'000, "annotation")};
  const TraceModel model = build_trace(capture_of_this_process(std::move(collected), {}, kWindow));
  expect_range(model, "<built-in method item>", {1'000, 2'000, 0, 0, 0});
  expect_range(model, "aten::item", {1'450, 2'000, 0, 0, kRangeImported});
  expect_range(model, "aten::_local_scalar_dense", {1'900, 2'000, 0, 0, kRangeImported});
  expect_range(model, "annotation", {11'000, 14'000, 0, 0, kRangeImported});
  expect_range(model, "__enter__", {10'000, 12'000, 0, 0, kRangeAsync});
  expect_range(model, "__exit__", {13'500, 14'300, 0, 0, kRangeAsync});
  EXPECT_EQ(model.stats.async_ranges, 2u);
}

TEST(TraceBuilder, RangesOnPerfprofsClockAloneAreNeverMoved) {
  CollectedEvents collected;
  collected.threads = {thread_events(0, 101, "main", {begin_event(1'000, 1, "frame", "python_function"),
                                                      end_event(2'000, 1)})};
  collected.completed = {completed(101, 1'500, 2'010, "GC-like range")};  // perfprof's clock: a real crossing
  const TraceModel model = build_trace(capture_of_this_process(std::move(collected), {}, kWindow));
  expect_range(model, "GC-like range", {1'500, 2'010, 0, 0, 0});
  expect_range(model, "frame", {1'000, 2'000, 0, 0, kRangeAsync});
}

CompletedRange backward(int64_t os_tid, int64_t begin_ns, int64_t end_ns, const char* name, int64_t sequence,
                        int64_t forward_os_tid) {
  CompletedRange range = completed(os_tid, begin_ns, end_ns, name, sequence);
  range.forward_os_tid = forward_os_tid;
  return range;
}

// As torch.profiler links forward and backward operators ("fwdbwd" flows).
TEST(TraceBuilder, LinksEachBackwardOperatorToTheLatestForwardOperatorOfItsSequenceNumber) {
  CollectedEvents collected;
  collected.completed = {
      completed(101, 100, 110, "aten::view", 7),  // same sequence number, starts first: not linked
      completed(101, 120, 300, "aten::embedding", 7),
      completed(101, 310, 400, "aten::add", 8),
      completed(303, 320, 330, "aten::add on another thread", 8),
      completed(101, 500, 600, "aten::mul", 9),  // its backward was not recorded
      backward(202, 1000, 1100, "evaluate_function: AddBackward0", 8, 101),
      backward(202, 1010, 1090, "AddBackward0", 8, 101),  // ends first: takes the link
      backward(202, 1200, 1300, "EmbeddingBackward0", 7, 101),
      backward(202, 1400, 1500, "MulBackward0", 10, 101),  // no forward operator with its number
      backward(202, 1600, 1700, "DivBackward0", 9, -1),    // its forward thread recorded nothing
  };
  const TraceModel model = build_trace(capture_of_this_process(std::move(collected), {}, kWindow));
  std::vector<std::pair<std::string, std::string>> links;
  for (const ForwardBackwardLink& link : model.forward_backward) {
    links.emplace_back(model.str(model.ranges.name[link.forward]), model.str(model.ranges.name[link.backward]));
  }
  EXPECT_EQ(links, (std::vector<std::pair<std::string, std::string>>{{"aten::add", "AddBackward0"},
                                                                     {"aten::embedding", "EmbeddingBackward0"}}));
}

TEST(TraceBuilder, GcPausesGetTheirOwnNamedTrack) {
  CollectedEvents collected;
  collected.threads = {thread_events(0, 101, "main", {instant_event(100, "x")})};
  collected.completed = {completed(kGcTrackTid, 200, 300, "GC")};
  const TraceModel model = build_trace(capture_of_this_process(std::move(collected), {}, kWindow));
  ASSERT_EQ(model.threads.size(), 2u);
  EXPECT_EQ(model.threads[1].os_tid, kGcTrackTid);
  EXPECT_EQ(model.threads[1].name, "Python GC");
  expect_range(model, "GC", {200, 300, 1, 1, 0});
}

TEST(TraceBuilder, OrdersThreadsByBufferIndexAndKeepsProcessFacts) {
  const TraceModel model = build({thread_events(5, 505, "late", {instant_event(100, "x")}),
                                  thread_events(2, 202, "early", {instant_event(100, "y")})},
                                 kWindow, /*dropped=*/17);
  ASSERT_EQ(model.threads.size(), 2u);
  EXPECT_EQ(model.threads[0].index, 2u);
  EXPECT_EQ(model.threads[0].os_tid, 202);
  EXPECT_EQ(model.threads[0].name, "early");
  EXPECT_EQ(model.threads[1].name, "late");
  ASSERT_EQ(model.instants.size(), 2u);
  EXPECT_EQ(model.str(model.instants.name[0]), "y");  // the lower index's events come first
  EXPECT_EQ(model.instants.track, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(model.stats.dropped_events, 17u);
  EXPECT_EQ(model.pid, getpid());
  EXPECT_FALSE(model.process_name.empty());
  EXPECT_EQ(model.str(kEmptyString), "");
}

}  // namespace
}  // namespace perfprof
