#pragma once
// The one host clock perfprof records with: CLOCK_MONOTONIC in nanoseconds. It is cheap (vDSO),
// never jumps backwards, and is the clock other sources (CUPTI) are aligned to.
#include <cstdint>
#include <ctime>

namespace perfprof {

inline int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Nanoseconds to add to a now_ns() value to get Unix time. Taken as the best (narrowest) of
// several bracketed reads, so its error is below a microsecond on an idle machine.
int64_t monotonic_to_unix_offset_ns() noexcept;

}  // namespace perfprof
