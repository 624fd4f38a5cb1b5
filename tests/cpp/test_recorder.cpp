#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "record/recorder.h"
#include "test_util.h"

namespace perfprof {
namespace {

using test::intern;
using test::RecorderSession;

// What worker `w` of a concurrency test writes with each range.
struct WorkerStrings {
  explicit WorkerStrings(int w)
      : thread_name(fmt::format("worker-{}", w)),
        name(intern(fmt::format("range of worker {}", w))),
        kind(static_cast<RangeKind>(w % 10)),
        args(global_arg_sets().intern(test::int_arg(ArgKey::GcThread, w))) {}
  std::string thread_name;
  StringId name;
  RangeKind kind;
  ArgSetId args;
};

// Releases all workers at once so they really record concurrently.
class StartGate {
 public:
  explicit StartGate(int parties) : waiting_(parties) {}
  void arrive_and_wait() {
    waiting_.fetch_sub(1, std::memory_order_acq_rel);
    while (waiting_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
  }

 private:
  std::atomic<int> waiting_;
};

// Runs `workers` threads, each naming itself and recording `ranges` begin/end pairs. Calls
// `while_running` (if given) repeatedly on this thread until they are done.
void record_ranges_concurrently(int workers, int ranges,
                                const std::function<void()>& while_running = {}) {
  StartGate gate(workers);
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      Recorder& recorder = Recorder::instance();
      const WorkerStrings strings(w);
      recorder.name_current_thread(strings.thread_name);
      gate.arrive_and_wait();
      for (int i = 0; i < ranges; ++i) {
        const uint64_t id = Recorder::next_range_id();
        recorder.begin_range(id, strings.name, strings.kind, strings.args);
        recorder.end_range(id);
      }
      finished.fetch_add(1);
    });
  }
  if (while_running) {
    do {
      while_running();
    } while (finished.load() < workers);
  }
  for (std::thread& thread : threads) thread.join();
}

// Checks one worker's stream: begin/end pairs in the order written, every field as written.
void expect_worker_stream(const ThreadEvents& thread, int worker, int ranges) {
  const WorkerStrings strings(worker);
  ASSERT_EQ(thread.events.size(), 2u * ranges) << thread.name;
  uint64_t previous_id = 0;
  int64_t previous_ts = 0;
  for (size_t k = 0; k < thread.events.size(); k += 2) {
    const RawEvent& begin = thread.events[k];
    const RawEvent& end = thread.events[k + 1];
    ASSERT_EQ(begin.kind, EventKind::RangeBegin) << thread.name << " event " << k;
    ASSERT_EQ(end.kind, EventKind::RangeEnd) << thread.name << " event " << k + 1;
    ASSERT_TRUE(begin.name == strings.name && begin.range_kind == strings.kind &&
                begin.args == strings.args)
        << thread.name << " begin " << k << " carries another thread's strings";
    ASSERT_TRUE(end.name == kEmptyString && end.range_kind == RangeKind::Other && end.args == kNoArgs)
        << thread.name << " end " << k + 1;
    ASSERT_EQ(end.payload, begin.payload) << thread.name << " event " << k + 1;
    // A thread's ids increase, so increasing ids mean the sequence was kept.
    ASSERT_GT(begin.payload, previous_id) << thread.name << " event " << k;
    ASSERT_GE(begin.ts_ns, previous_ts) << thread.name << " event " << k;
    ASSERT_GE(end.ts_ns, begin.ts_ns) << thread.name << " event " << k + 1;
    previous_id = begin.payload;
    previous_ts = end.ts_ns;
  }
}

// Checks that `threads` hold exactly the streams of workers 0..workers-1 and that every range
// id is distinct.
void expect_all_workers(const std::vector<ThreadEvents>& threads, int workers, int ranges) {
  ASSERT_EQ(threads.size(), static_cast<size_t>(workers));
  std::vector<bool> seen(workers, false);
  std::vector<uint64_t> ids;
  ids.reserve(static_cast<size_t>(workers) * ranges);
  for (const ThreadEvents& thread : threads) {
    int worker = -1;
    ASSERT_EQ(std::sscanf(thread.name.c_str(), "worker-%d", &worker), 1) << thread.name;
    ASSERT_TRUE(worker >= 0 && worker < workers && !seen[worker]) << thread.name;
    seen[worker] = true;
    expect_worker_stream(thread, worker, ranges);
    for (size_t k = 0; k < thread.events.size(); k += 2) ids.push_back(thread.events[k].payload);
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "a range id was reused";
}

TEST(Recorder, EightThreadsRecordConcurrentlyWithoutLossOrTearing) {
  constexpr int kWorkers = 8;
  constexpr int kRanges = 100'000;
  RecorderSession session(kChannelUserAnnotations);
  record_ranges_concurrently(kWorkers, kRanges);

  const CollectedEvents collected = Recorder::instance().collect();
  EXPECT_EQ(collected.dropped_events, 0u);
  expect_all_workers(collected.threads, kWorkers, kRanges);

  EXPECT_TRUE(Recorder::instance().collect().threads.empty()) << "events were delivered twice";
}

TEST(Recorder, CollectWhileThreadsRecordLosesNothing) {
  constexpr int kWorkers = 4;
  constexpr int kRanges = 100'000;
  RecorderSession session(kChannelUserAnnotations);

  // Partial collections are merged per recorder buffer, as a profiler collecting each step does.
  std::map<uint32_t, ThreadEvents> merged;
  auto collect_into_merged = [&] {
    CollectedEvents collected = Recorder::instance().collect();
    for (ThreadEvents& thread : collected.threads) {
      ThreadEvents& into = merged[thread.index];
      into.name = thread.name;
      into.events.insert(into.events.end(), thread.events.begin(), thread.events.end());
    }
  };
  record_ranges_concurrently(kWorkers, kRanges, collect_into_merged);
  collect_into_merged();  // what was recorded after the last collection

  std::vector<ThreadEvents> threads;
  for (auto& [index, thread] : merged) threads.push_back(std::move(thread));
  expect_all_workers(threads, kWorkers, kRanges);
}

TEST(Recorder, KeepsEventsOfExitedThreads) {
  RecorderSession session(kChannelUserAnnotations);
  const StringId tick = intern("tick from a short-lived thread");
  std::thread([&] {
    Recorder::instance().name_current_thread("short-lived");
    for (int i = 0; i < 3; ++i) Recorder::instance().instant(tick, RangeKind::Other, kNoArgs);
  }).join();

  const CollectedEvents collected = Recorder::instance().collect();
  ASSERT_EQ(collected.threads.size(), 1u);
  const ThreadEvents& thread = collected.threads[0];
  EXPECT_EQ(thread.name, "short-lived");
  ASSERT_EQ(thread.events.size(), 3u);
  for (const RawEvent& event : thread.events) {
    EXPECT_EQ(event.kind, EventKind::Instant);
    EXPECT_EQ(event.name, tick);
  }
  EXPECT_TRUE(Recorder::instance().collect().threads.empty());
}

TEST(Recorder, DiscardDropsEverythingRecordedSoFar) {
  RecorderSession session(kChannelUserAnnotations);
  const StringId before = intern("before discard");
  const StringId after = intern("after discard");
  Recorder& recorder = Recorder::instance();

  std::thread([&] { recorder.instant(before, RangeKind::Other, kNoArgs); }).join();
  for (int i = 0; i < 5; ++i) recorder.instant(before, RangeKind::Other, kNoArgs);
  recorder.discard();
  EXPECT_TRUE(recorder.collect().threads.empty());

  recorder.instant(after, RangeKind::Other, kNoArgs);
  const std::vector<RawEvent> events = test::all_events(recorder.collect());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].name, after);
}

TEST(Recorder, CompletedRangesAreCollectedOnceAndDiscarded) {
  RecorderSession session(kChannelOperators);
  Recorder& recorder = Recorder::instance();
  const StringId name = intern("imported");
  recorder.add_completed({{42, 10, 20, name, kNoArgs, 3}});
  std::thread([&] { recorder.add_completed({{43, 30, 40, name, kNoArgs, -1}}); }).join();
  CollectedEvents collected = recorder.collect();
  ASSERT_EQ(collected.completed.size(), 2u);
  EXPECT_EQ(collected.completed[0].os_tid, 42);
  EXPECT_EQ(collected.completed[0].sequence, 3);
  EXPECT_EQ(collected.completed[1].begin_ns, 30);
  EXPECT_TRUE(recorder.collect().completed.empty());

  recorder.add_completed({{42, 10, 20, name, kNoArgs, -1}});
  recorder.discard();
  EXPECT_TRUE(recorder.collect().completed.empty());
}

TEST(Recorder, CountersStoreTheValueBits) {
  RecorderSession session(kChannelCounters);
  const StringId name = intern("memory");
  Recorder::instance().counter(name, -1234.5625);
  const std::vector<RawEvent> events = test::all_events(Recorder::instance().collect());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::Counter);
  double value = 0;
  std::memcpy(&value, &events[0].payload, sizeof(value));
  EXPECT_EQ(value, -1234.5625);
}

TEST(Recorder, RangeIdsAreUniqueAcrossThreadsAndNeverZero) {
  constexpr int kThreads = 8;
  constexpr int kIds = 20'000;
  std::vector<std::vector<uint64_t>> per_thread(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ids = per_thread[t]] {
      for (int i = 0; i < kIds; ++i) ids.push_back(Recorder::next_range_id());
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<uint64_t> all;
  for (const auto& ids : per_thread) {
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    all.insert(all.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(std::count(all.begin(), all.end(), 0u), 0);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

TEST(Recorder, ChannelMask) {
  RecorderSession session(kChannelMstx | kChannelCounters);
  Recorder& recorder = Recorder::instance();
  EXPECT_TRUE(recorder.enabled(kChannelMstx));
  EXPECT_TRUE(recorder.enabled(kChannelCounters));
  EXPECT_FALSE(recorder.enabled(kChannelSteps));
  EXPECT_FALSE(recorder.enabled(kChannelUserAnnotations));
  recorder.set_channels(0);
  EXPECT_EQ(recorder.channels(), 0u);
}

}  // namespace
}  // namespace perfprof
