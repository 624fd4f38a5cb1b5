#pragma once
// What every CSV table perfprof writes shares: field quoting and time columns.
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace perfprof {

// A CSV field: quoted when it holds a separator, quote or line break.
inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

// Nanoseconds as microseconds with three decimals, exact even for Unix times (a double would
// round them: 1.7e18 ns needs more than its 53 bits).
inline void append_us(std::string& out, int64_t ns) {
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  fmt::format_to(std::back_inserter(out), "{}{}.{:03}", ns < 0 ? "-" : "", magnitude / 1000, magnitude % 1000);
}

}  // namespace perfprof
