#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "mstx/mstx.h"
#include "record/recorder.h"
#include "test_util.h"
#include "capture/live_capture.h"
#include "trace/trace_builder.h"

namespace perfprof {
namespace {

using test::intern;

class MstxTest : public ::testing::Test {
 protected:
  MstxTest() : session_(kChannelMstx) { mstx().filter_domains({}, {}); }
  ~MstxTest() override { mstx().filter_domains({}, {}); }

  static Mstx& mstx() { return Mstx::instance(); }

  // Starts a range called `message` in `domain`; returns perfprof's range id.
  static uint64_t start(MstxDomain& domain, const std::string& message) {
    return mstx().range_start(domain, intern(message), message.c_str(), domain.args);
  }
  static void range(MstxDomain& domain, const std::string& message) {
    mstx().range_end(start(domain, message));
  }

  // Names of the range begins recorded so far (consumes the recorder's events).
  static std::vector<std::string> recorded_begin_names() {
    const std::vector<std::string> strings = global_strings().snapshot();
    std::vector<std::string> names;
    for (const RawEvent& event : test::all_events(Recorder::instance().collect())) {
      if (event.kind == EventKind::RangeBegin) names.push_back(strings[event.name]);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  test::RecorderSession session_;
};

using Names = std::vector<std::string>;

TEST_F(MstxTest, RangeIsRecordedAsUserAnnotationWithDomainArgs) {
  MstxDomain& domain = mstx().domain("mstx-test \"train\"");
  EXPECT_EQ(&domain, &mstx().domain("mstx-test \"train\"")) << "one domain per name";
  EXPECT_EQ(domain.name, "mstx-test \"train\"");

  const uint64_t id = start(domain, "forward");
  EXPECT_NE(id, 0u);
  mstx().range_end(id);

  const CollectedEvents collected = Recorder::instance().collect();
  const std::vector<RawEvent> events = test::all_events(collected);
  ASSERT_EQ(events.size(), 2u);
  const RawEvent& begin = events[0];
  EXPECT_EQ(begin.kind, EventKind::RangeBegin);
  EXPECT_EQ(begin.payload, id);
  EXPECT_EQ(begin.name, intern("forward"));
  EXPECT_EQ(begin.range_kind, RangeKind::Mstx);
  EXPECT_EQ(begin.args, domain.args);
  EXPECT_EQ(begin.args, global_arg_sets().intern(test::text_arg(ArgKey::Domain, "mstx-test \"train\"")));
  EXPECT_EQ(events[1].kind, EventKind::RangeEnd);
  EXPECT_EQ(events[1].payload, id);
}

TEST_F(MstxTest, MarkIsRecordedAsInstant) {
  MstxDomain& domain = mstx().domain("mstx-test-marks");
  mstx().mark(domain, intern("checkpoint"), "checkpoint", domain.args);
  const std::vector<RawEvent> events = test::all_events(Recorder::instance().collect());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::Instant);
  EXPECT_EQ(events[0].name, intern("checkpoint"));
  EXPECT_EQ(events[0].range_kind, RangeKind::Mstx);
  EXPECT_EQ(events[0].args, domain.args);
}

TEST_F(MstxTest, IncludeFilterRecordsOnlyListedDomains) {
  MstxDomain& a = mstx().domain("mstx-test-a");
  mstx().filter_domains({"mstx-test-a"}, {});
  MstxDomain& b = mstx().domain("mstx-test-b");  // created after the filter: filtered too
  range(a, "in a");
  range(b, "in b");
  mstx().mark(b, intern("mark in b"), "mark in b", b.args);
  EXPECT_EQ(recorded_begin_names(), Names{"in a"});
}

TEST_F(MstxTest, ExcludeFilterRecordsAllButListedDomains) {
  MstxDomain& a = mstx().domain("mstx-test-a");
  MstxDomain& b = mstx().domain("mstx-test-b");
  MstxDomain& c = mstx().domain("mstx-test-c");
  mstx().filter_domains({}, {"mstx-test-b"});
  range(a, "in a");
  range(b, "in b");
  range(c, "in c");
  EXPECT_EQ(recorded_begin_names(), (Names{"in a", "in c"}));

  mstx().filter_domains({}, {});
  range(b, "in b again");
  EXPECT_EQ(recorded_begin_names(), Names{"in b again"});
}

TEST_F(MstxTest, FilteredRangeLeavesNoRangeInTheTrace) {
  MstxDomain& kept = mstx().domain("mstx-test-kept");
  MstxDomain& dropped = mstx().domain("mstx-test-dropped");
  mstx().filter_domains({}, {"mstx-test-dropped"});
  range(kept, "kept range");
  range(dropped, "dropped range");
  const TraceModel model = build_trace(capture_of_this_process(Recorder::instance().collect(), {}, {0, now_ns()}));
  ASSERT_EQ(model.ranges.size(), 1u);
  EXPECT_EQ(model.str(model.ranges.name[0]), "kept range");
  EXPECT_EQ(model.stats.unmatched_range_ends, 0u) << "a filtered range records no end either";
}

TEST_F(MstxTest, RecordedRangeEndsWhateverDomainRangeEndIsGiven) {
  MstxDomain& kept = mstx().domain("mstx-test-kept");
  mstx().filter_domains({"mstx-test-kept"}, {});
  mstx().range_end(start(kept, "ended without its domain"));  // range_end takes only the id
  const TraceModel model = build_trace(capture_of_this_process(Recorder::instance().collect(), {}, {0, now_ns()}));
  ASSERT_EQ(model.ranges.size(), 1u);
  EXPECT_EQ(model.ranges.flags[0] & kRangeUnfinished, 0);
}

TEST_F(MstxTest, ChannelOffRecordsNothingButIdsStayUnique) {
  Recorder::instance().set_channels(kChannelUserAnnotations);  // everything but mstx
  MstxDomain& domain = mstx().domain("mstx-test-off");
  std::vector<uint64_t> ids;
  for (int i = 0; i < 100; ++i) {
    ids.push_back(start(domain, "unrecorded"));
    mstx().mark(domain, intern("unrecorded mark"), "unrecorded mark", domain.args);
  }
  for (const uint64_t id : ids) mstx().range_end(id);

  EXPECT_TRUE(Recorder::instance().collect().threads.empty());
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 0u), 0);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

TEST_F(MstxTest, RangeEndedOnAnotherThreadPairs) {
  Recorder::instance().name_current_thread("mstx-starter");
  MstxDomain& domain = mstx().domain("mstx-test-threads");
  const uint64_t id = start(domain, "cross-thread");
  std::thread([id] {
    Recorder::instance().name_current_thread("mstx-ender");
    Mstx::instance().range_end(id);
  }).join();

  const TraceModel model = build_trace(capture_of_this_process(Recorder::instance().collect(), {}, {0, now_ns()}));
  ASSERT_EQ(model.ranges.size(), 1u);
  EXPECT_EQ(model.stats.unmatched_range_ends, 0u);
  EXPECT_EQ(model.stats.unfinished_ranges, 0u);
  const RangeTable& r = model.ranges;
  EXPECT_EQ(model.str(r.name[0]), "cross-thread");
  EXPECT_EQ(model.threads[r.track[0]].name, "mstx-starter");
  EXPECT_EQ(model.threads[r.end_track[0]].name, "mstx-ender");
  EXPECT_TRUE(r.flags[0] & kRangeAsync);
  EXPECT_LE(r.begin_ns[0], r.end_ns[0]);
}

TEST_F(MstxTest, ArgsWithStreamNameTheDomainAndStream) {
  MstxDomain& domain = mstx().domain("mstx-test-stream");
  const ArgSetId args = mstx().args_with_stream(domain, 7);
  ArgSet expected = test::text_arg(ArgKey::Domain, "mstx-test-stream");
  expected.args.push_back({ArgKey::Stream, int64_t{7}});
  EXPECT_EQ(args, global_arg_sets().intern(expected));
}

}  // namespace
}  // namespace perfprof
