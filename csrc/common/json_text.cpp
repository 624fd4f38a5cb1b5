#include "common/json_text.h"

#include <cmath>

namespace perfprof {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence starting at text[i], or 0 if it is not valid.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  uint32_t min_code = 0;
  uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) { length = 2; code = lead & 0x1F; min_code = 0x80; }
  else if (lead >= 0xE0 && lead <= 0xEF) { length = 3; code = lead & 0x0F; min_code = 0x800; }
  else if (lead >= 0xF0 && lead <= 0xF4) { length = 4; code = lead & 0x07; min_code = 0x10000; }
  else return 0;
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  return (code < min_code || code > 0x10FFFF || surrogate) ? 0 : length;
}

void append_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  size_t plain_from = 0;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (const size_t length = utf8_sequence_length(text, i)) {
        i += length;
        continue;
      }
    }
    out.append(text.data() + plain_from, i - plain_from);
    if (c >= 0x80) out += kReplacementCharacter;
    else append_escape(out, c);
    plain_from = ++i;
  }
  out.append(text.data() + plain_from, text.size() - plain_from);
  out += '"';
}

void append_ns_as_us(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_int(out, ns / 1000);
  const auto fraction = static_cast<int>(ns % 1000);
  const char digits[4] = {'.', char('0' + fraction / 100), char('0' + fraction / 10 % 10),
                          char('0' + fraction % 10)};
  out.append(digits, 4);
}

void append_json_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", value);
}

}  // namespace perfprof
