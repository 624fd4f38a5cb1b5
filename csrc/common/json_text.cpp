#include "common/json_text.h"
#include "common/utf8.h"

#include <cmath>

namespace perfprof {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

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
