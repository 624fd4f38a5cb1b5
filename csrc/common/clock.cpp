#include "common/clock.h"

#include <limits>

namespace perfprof {

int64_t monotonic_to_unix_offset_ns() noexcept {
  constexpr int kReads = 16;
  int64_t best_width = std::numeric_limits<int64_t>::max();
  int64_t best_offset = 0;
  for (int i = 0; i < kReads; ++i) {
    const int64_t before = now_ns();
    timespec wall{};
    clock_gettime(CLOCK_REALTIME, &wall);
    const int64_t after = now_ns();
    const int64_t width = after - before;
    if (width < best_width) {
      best_width = width;
      const int64_t wall_ns = int64_t{wall.tv_sec} * 1'000'000'000 + wall.tv_nsec;
      best_offset = wall_ns - (before + width / 2);
    }
  }
  return best_offset;
}

}  // namespace perfprof
