#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "record/thread_buffer.h"

namespace perfprof {
namespace {

constexpr uint64_t kNameCycle = 7;

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
  ThreadBuffer buffer(0, 1, "writer");
  const uint64_t count = 3 * ThreadBuffer::kChunkEvents + 123;
  append_numbered(buffer, 0, count);
  EXPECT_TRUE(buffer.has_unconsumed());

  std::vector<RawEvent> events;
  buffer.consume(&events);
  expect_numbered(events, 0, count);
  EXPECT_FALSE(buffer.has_unconsumed());
  EXPECT_EQ(buffer.take_dropped(), 0u);
}

TEST(ThreadBuffer, ConsumeReturnsOnlyNewEvents) {
  ThreadBuffer buffer(0, 1, "writer");
  append_numbered(buffer, 0, 10);
  std::vector<RawEvent> first;
  buffer.consume(&first);
  expect_numbered(first, 0, 10);

  // Across a chunk boundary, into a vector that already holds something (it is appended to).
  const uint64_t end = ThreadBuffer::kChunkEvents + 5;
  append_numbered(buffer, 10, end);
  std::vector<RawEvent> second{numbered(999)};
  buffer.consume(&second);
  ASSERT_EQ(second.size(), end - 10 + 1);
  second.erase(second.begin());
  expect_numbered(second, 10, end - 10);

  std::vector<RawEvent> third;
  buffer.consume(&third);
  EXPECT_TRUE(third.empty());
  EXPECT_FALSE(buffer.has_unconsumed());
}

TEST(ThreadBuffer, ConsumeIntoNullDiscards) {
  ThreadBuffer buffer(0, 1, "writer");
  append_numbered(buffer, 0, 2 * ThreadBuffer::kChunkEvents);
  buffer.consume(nullptr);
  EXPECT_FALSE(buffer.has_unconsumed());

  append_numbered(buffer, 100, 103);
  std::vector<RawEvent> events;
  buffer.consume(&events);
  expect_numbered(events, 100, 3);
}

TEST(ThreadBuffer, KeepsIdentityAndName) {
  ThreadBuffer buffer(7, 4242, "first");
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
  ThreadBuffer buffer(0, 1, "writer");
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

}  // namespace
}  // namespace perfprof
