#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "record/thread_buffer.h"

namespace perfprof {
namespace {

constexpr uint64_t kNameCycle = 7;

// Events the first `chunks` chunks of a buffer hold (they start small and double).
uint64_t first_chunks_events(int chunks) {
  uint64_t events = 0;
  for (uint64_t size = ThreadBuffer::kFirstChunkEvents; chunks-- > 0; size = std::min<uint64_t>(size * 2, ThreadBuffer::kMaxChunkEvents)) {
    events += size;
  }
  return events;
}

// A budget with no limit, for buffers whose room is not under test.
EventBudget& unlimited() {
  static EventBudget budget;
  return budget;
}

// Event number `i`: every field derives from `i`, so a torn or misplaced event is detectable.
RawEvent numbered(uint64_t i) {
  return {static_cast<int64_t>(i), i, static_cast<StringId>(i % kNameCycle + 1),
          ArgSetId{static_cast<uint32_t>(i % 5)}, EventKind::Instant, static_cast<RangeKind>(i % 3), {}};
}

void append_numbered(ThreadBuffer& buffer, uint64_t from, uint64_t to) {
  for (uint64_t i = from; i < to; ++i) buffer.append(numbered(i));
}

// Checks that `events` are exactly numbered(first), numbered(first + 1), ...
void expect_numbered(const std::vector<RawEvent>& events, uint64_t first, uint64_t count) {
  ASSERT_EQ(events.size(), count);
  for (uint64_t k = 0; k < count; ++k) {
    const RawEvent expected = numbered(first + k);
    const RawEvent& e = events[k];
    ASSERT_TRUE(e.payload == expected.payload && e.ts_ns == expected.ts_ns &&
                e.name == expected.name && e.range_kind == expected.range_kind &&
                e.args == expected.args && e.kind == expected.kind)
        << "event " << k << " has payload " << e.payload << ", expected " << expected.payload;
  }
}

TEST(ThreadBuffer, KeepsOrderAcrossManyChunks) {
  ThreadBuffer buffer(0, 1, "writer", unlimited());
  const uint64_t count = first_chunks_events(9) + 123;  // small chunks, then full ones
  append_numbered(buffer, 0, count);
  EXPECT_TRUE(buffer.has_unconsumed());

  std::vector<RawEvent> events;
  buffer.consume(&events);
  expect_numbered(events, 0, count);
  EXPECT_FALSE(buffer.has_unconsumed());
  EXPECT_EQ(buffer.take_dropped(), 0u);
}

TEST(ThreadBuffer, ConsumeReturnsOnlyNewEvents) {
  ThreadBuffer buffer(0, 1, "writer", unlimited());
  append_numbered(buffer, 0, 10);
  std::vector<RawEvent> first;
  buffer.consume(&first);
  expect_numbered(first, 0, 10);

  // Across a chunk boundary, into a vector that already holds something (it is appended to).
  const uint64_t end = first_chunks_events(2) + 5;
  append_numbered(buffer, 10, end);
  std::vector<RawEvent> second{numbered(999)};
  EXPECT_EQ(buffer.consume(&second), end - 10);
  ASSERT_EQ(second.size(), end - 10 + 1);
  second.erase(second.begin());
  expect_numbered(second, 10, end - 10);

  std::vector<RawEvent> third;
  EXPECT_EQ(buffer.consume(&third), 0u);
  EXPECT_TRUE(third.empty());
  EXPECT_FALSE(buffer.has_unconsumed());
}

TEST(ThreadBuffer, ConsumeIntoNullDiscards) {
  ThreadBuffer buffer(0, 1, "writer", unlimited());
  append_numbered(buffer, 0, first_chunks_events(3));
  EXPECT_EQ(buffer.consume(nullptr), first_chunks_events(3));  // what the caller counts as dropped
  EXPECT_FALSE(buffer.has_unconsumed());

  append_numbered(buffer, 100, 103);
  std::vector<RawEvent> events;
  buffer.consume(&events);
  expect_numbered(events, 100, 3);
}

TEST(ThreadBuffer, KeepsIdentityAndName) {
  ThreadBuffer buffer(7, 4242, "first", unlimited());
  EXPECT_EQ(buffer.index(), 7u);
  EXPECT_EQ(buffer.os_tid(), 4242);
  EXPECT_EQ(buffer.name(), "first");
  buffer.set_name("renamed");
  EXPECT_EQ(buffer.name(), "renamed");
  EXPECT_FALSE(buffer.thread_exited());
  buffer.mark_thread_exited();
  EXPECT_TRUE(buffer.thread_exited());
}

TEST(ThreadBuffer, ConcurrentConsumerLosesAndDuplicatesNothing) {
  constexpr uint64_t kCount = 1'000'000;
  ThreadBuffer buffer(0, 1, "writer", unlimited());
  std::atomic<bool> writer_done{false};

  std::thread writer([&] {
    append_numbered(buffer, 0, kCount);
    writer_done.store(true, std::memory_order_release);
  });

  std::vector<RawEvent> events;
  do {
    buffer.consume(&events);
  } while (!writer_done.load(std::memory_order_acquire));
  writer.join();
  buffer.consume(&events);  // whatever was committed after the last loop iteration

  expect_numbered(events, 0, kCount);
  EXPECT_FALSE(buffer.has_unconsumed());
  EXPECT_EQ(buffer.take_dropped(), 0u);
}

TEST(ThreadBuffer, BeyondItsBudgetDropsAndCountsEvents) {
  EventBudget budget;
  budget.reset(first_chunks_events(2));  // room for the first two chunks, no more
  ThreadBuffer buffer(0, 1, "writer", budget);
  const uint64_t room = first_chunks_events(2);
  append_numbered(buffer, 0, room + 1000);
  EXPECT_TRUE(budget.reached());
  EXPECT_EQ(buffer.take_dropped(), 1000u);
  std::vector<RawEvent> events;
  buffer.consume(&events);
  expect_numbered(events, 0, room);  // the first ones kept, in order

  // Room given back (warm-up discarded): recording goes on at once, in a new chunk.
  budget.refill();
  EXPECT_FALSE(budget.reached());
  append_numbered(buffer, room + 1000, room + 1010);
  events.clear();
  buffer.consume(&events);
  expect_numbered(events, room + 1000, 10);
  EXPECT_EQ(buffer.take_dropped(), 0u);
}

TEST(ThreadBuffer, AFewEventsTakeAFewKilobytes) {
  // Thousands of short-lived threads each record a few events: each buffer takes one small
  // chunk from the budget, not a full one.
  EventBudget budget;
  budget.reset(1000 * ThreadBuffer::kFirstChunkEvents);
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  for (uint32_t thread = 0; thread < 1000; ++thread) {
    buffers.push_back(std::make_unique<ThreadBuffer>(thread, thread, "short-lived", budget));
    append_numbered(*buffers.back(), 0, 2);
  }
  EXPECT_FALSE(budget.reached());
  for (auto& buffer : buffers) EXPECT_EQ(buffer->take_dropped(), 0u);
}

TEST(EventBudget, ThreadsTakingAtOnceNeverTakeMoreThanTheLimit) {
  EventBudget budget;
  budget.reset(1000);
  std::atomic<uint64_t> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      while (budget.take(7)) taken.fetch_add(7);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(taken.load(), 1000u / 7 * 7);
  EXPECT_TRUE(budget.reached());
}

}  // namespace
}  // namespace perfprof
