#pragma once
// How many more events a session may store: the cap on what recording holds for the trace that
// is built when the session stops (events moved to a capture file still count: the build reads
// them back). Thread buffers take from it a chunk at a time; once it is spent they drop events
// and count them, so memory pressure costs data, never the job.
#include <atomic>
#include <cstdint>
#include <limits>

namespace perfprof {

class EventBudget {
 public:
  static constexpr uint64_t kUnlimited = std::numeric_limits<int64_t>::max();

  // Allows `events` more from now on and forgets that the last limit was reached.
  void reset(uint64_t events) noexcept {
    const uint64_t capped = events < kUnlimited ? events : kUnlimited;
    limit_.store(capped, std::memory_order_relaxed);
    remaining_.store(static_cast<int64_t>(capped), std::memory_order_relaxed);
    reached_.store(false, std::memory_order_relaxed);
  }
  // Allows the last limit again (the events taken so far were discarded).
  void refill() noexcept { reset(limit_.load(std::memory_order_relaxed)); }

  // Takes room for `events`; false (and the budget is marked reached) when there is not enough.
  bool take(uint64_t events) noexcept {
    int64_t left = remaining_.load(std::memory_order_relaxed);
    const auto wanted = static_cast<int64_t>(events);
    while (left >= wanted) {
      if (remaining_.compare_exchange_weak(left, left - wanted, std::memory_order_relaxed)) return true;
    }
    reached_.store(true, std::memory_order_relaxed);
    return false;
  }

  uint64_t limit() const noexcept { return limit_.load(std::memory_order_relaxed); }
  bool reached() const noexcept { return reached_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> limit_{kUnlimited};
  std::atomic<int64_t> remaining_{static_cast<int64_t>(kUnlimited)};
  std::atomic<bool> reached_{false};
};

}  // namespace perfprof
