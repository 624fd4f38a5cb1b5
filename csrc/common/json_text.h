#pragma once
// Building blocks for writing JSON text quickly into a std::string.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace perfprof {

// Appends `text` as a JSON string literal, quotes included. Quotes, backslashes and control
// characters are escaped; bytes that are not valid UTF-8 become U+FFFD so the output is always
// valid JSON whatever the input.
void append_json_string(std::string& out, std::string_view text);

inline void append_int(std::string& out, int64_t value) {
  const fmt::format_int digits(value);
  out.append(digits.data(), digits.size());
}

// Nanoseconds as microseconds with three decimals ("1234.056"): exact, and what Chrome-trace
// readers expect for "ts" and "dur".
void append_ns_as_us(std::string& out, int64_t ns);

// A double as JSON (NaN and infinities, which JSON cannot express, become null).
void append_json_number(std::string& out, double value);

}  // namespace perfprof
