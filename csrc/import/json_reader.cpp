#include "import/json_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "common/utf8.h"

namespace perfprof {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A value printable in an error message: short, and without control characters.
std::string shown(char c) {
  if (c == '\0') return "the end of the file (a file cut short)";
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
    return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
  }
  return fmt::format("'{}'", c);
}

}  // namespace

// zlib's reader passes a file without a gzip header through unchanged: one path for both.
struct JsonReader::Source {
  gzFile file = nullptr;
  ~Source() {
    if (file != nullptr) gzclose(file);
  }
};

const JsonValue* JsonValue::member(std::string_view key) const {
  for (size_t i = 0; i < keys.size() && i < items.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

JsonReader::JsonReader(const std::string& path) : path_(path), source_(std::make_unique<Source>()) {
  source_->file = gzopen(path.c_str(), "rb");
  if (source_->file == nullptr) {
    throw TraceImportError(fmt::format("{}: cannot be opened: {}", path, std::strerror(errno != 0 ? errno : ENOENT)));
  }
  gzbuffer(source_->file, 256 << 10);
  buffer_.resize(kBufferBytes);
}

JsonReader::~JsonReader() = default;

void JsonReader::fail(std::string_view what) const {
  throw TraceImportError(fmt::format("{}: byte {}: {}", path_, consumed_ + position_, what));
}

bool JsonReader::refill() {
  consumed_ += end_;
  position_ = end_ = 0;
  const int read = gzread(source_->file, buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (read < 0) {
    int code = 0;
    std::string_view message = gzerror(source_->file, &code);
    if (message.substr(0, path_.size() + 2) == path_ + ": ") message.remove_prefix(path_.size() + 2);  // zlib names it too
    throw TraceImportError(fmt::format("{}: byte {}: cannot be read: {}", path_, consumed_,
                                       code == Z_ERRNO ? std::strerror(errno) : message));
  }
  if (read == 0) {
    int code = 0;
    gzerror(source_->file, &code);
    if (code == Z_BUF_ERROR) fail("the gzip stream ends early (a file cut short)");
    return false;
  }
  end_ = static_cast<size_t>(read);
  return true;
}

char JsonReader::next_byte() {
  if (position_ == end_ && !refill()) fail("the file ends inside a value (a file cut short)");
  return buffer_[position_++];
}

void JsonReader::skip_whitespace() {
  for (;;) {
    if (position_ == end_ && !refill()) return;
    const char c = buffer_[position_];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
    ++position_;
  }
}

char JsonReader::peek() {
  skip_whitespace();
  return position_ == end_ ? '\0' : buffer_[position_];
}

void JsonReader::expect(char c, std::string_view where) {
  const char found = peek();
  if (found == '\0') fail("the file ends before the document does (a file cut short)");
  if (found != c) fail(fmt::format("expected '{}' {}, found {}", c, where, shown(found)));
  ++position_;
}

void JsonReader::expect_end() {
  const char found = peek();
  if (found != '\0') fail(fmt::format("expected the end of the file after the document, found {}", shown(found)));
}

JsonReader::Members JsonReader::object() {
  expect('{', "to begin an object");
  return Members(*this);
}

JsonReader::Items JsonReader::array() {
  expect('[', "to begin an array");
  return Items(*this);
}

bool JsonReader::Members::next(std::string& key) {
  const char c = reader_.peek();
  if (c == '\0') reader_.fail("the file ends inside an object (a file cut short)");
  if (c == '}') {
    ++reader_.position_;
    return false;
  }
  if (!first_) reader_.expect(',', "between the members of an object");
  first_ = false;
  if (reader_.peek() != '"') reader_.fail(fmt::format("expected a member's name, found {}", shown(reader_.peek())));
  reader_.read_string(key);
  reader_.expect(':', "after a member's name");
  return true;
}

bool JsonReader::Items::next() {
  const char c = reader_.peek();
  if (c == '\0') reader_.fail("the file ends inside an array (a file cut short)");
  if (c == ']') {
    ++reader_.position_;
    return false;
  }
  if (!first_) reader_.expect(',', "between the items of an array");
  first_ = false;
  return true;
}

void JsonReader::read_string(std::string& out) {
  expect('"', "to begin a string");
  out.clear();
  for (;;) {
    // The bytes up to the next quote or backslash, copied a run at a time.
    if (position_ == end_ && !refill()) fail("the file ends inside a string (a file cut short)");
    const char* begin = buffer_.data() + position_;
    const char* stop = begin;
    const char* limit = buffer_.data() + end_;
    while (stop != limit && *stop != '"' && *stop != '\\' && static_cast<unsigned char>(*stop) >= 0x20) ++stop;
    out.append(begin, stop);
    position_ += static_cast<size_t>(stop - begin);
    if (out.size() > kMaxStringBytes) fail(fmt::format("a string longer than {} MiB", kMaxStringBytes >> 20));
    if (stop == limit) continue;
    const char c = buffer_[position_++];
    if (c == '"') return;
    if (c == '\\') {
      append_escape(out);
    } else {
      --position_;
      fail(fmt::format("a control character ({}) inside a string", shown(c)));
    }
  }
}

uint32_t JsonReader::read_hex4() {
  uint32_t code = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = next_byte();
    code <<= 4;
    if (is_digit(c)) {
      code |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      code |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      code |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      fail(fmt::format("expected a hex digit in a \\u escape, found {}", shown(c)));
    }
  }
  return code;
}

void JsonReader::append_escape(std::string& out) {
  const char c = next_byte();
  switch (c) {
    case '"': out += '"'; return;
    case '\\': out += '\\'; return;
    case '/': out += '/'; return;
    case 'b': out += '\b'; return;
    case 'f': out += '\f'; return;
    case 'n': out += '\n'; return;
    case 'r': out += '\r'; return;
    case 't': out += '\t'; return;
    case 'u': break;
    default: fail(fmt::format("an unknown escape \\{} in a string", shown(c)));
  }
  uint32_t code = read_hex4();
  if (code >= 0xD800 && code < 0xDC00) {  // a high surrogate: its low half follows as \uDC00..\uDFFF
    if (next_byte() != '\\' || next_byte() != 'u') fail("a \\u escape's high surrogate without its low half");
    const uint32_t low = read_hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail("a \\u escape's high surrogate without its low half");
    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
  } else if (code >= 0xDC00 && code <= 0xDFFF) {
    code = 0xFFFD;  // a lone low surrogate: the replacement character, as a lenient decoder gives
  }
  append_utf8(out, code);
}

void JsonReader::read_number(std::string& out) {
  out.clear();
  const auto take = [&]() {
    out += buffer_[position_++];
    if (out.size() > 64) fail("a number longer than 64 characters");
  };
  const auto at = [&]() -> char { return position_ == end_ && !refill() ? '\0' : buffer_[position_]; };
  const auto digits = [&](const char* what) {
    if (!is_digit(at())) fail(fmt::format("expected a digit {}, found {}", what, shown(at())));
    while (is_digit(at())) take();
  };
  skip_whitespace();
  if (at() == '-') take();
  if (at() == '0') {
    take();
  } else {
    digits("in a number");
  }
  if (at() == '.') {
    take();
    digits("after a decimal point");
  }
  if (at() == 'e' || at() == 'E') {
    take();
    if (at() == '+' || at() == '-') take();
    digits("in an exponent");
  }
}

void JsonReader::read_literal(std::string_view rest) {
  for (const char expected : rest) {
    const char c = next_byte();
    if (c != expected) {
      --position_;
      fail(fmt::format("expected a value (true, false or null), found {}", shown(c)));
    }
  }
}

void JsonReader::read_value(JsonValue& out) { read_value(out, 0); }

void JsonReader::read_value(JsonValue& out, size_t depth) {
  out.text.clear();
  out.items.clear();
  out.keys.clear();
  const char c = peek();
  switch (c) {
    case '{': {
      if (depth == kMaxDepth) fail(fmt::format("objects and arrays nested deeper than {}", kMaxDepth));
      out.type = JsonValue::Type::Object;
      Members members = object();
      std::string key;
      while (members.next(key)) {
        out.keys.push_back(key);
        read_value(out.items.emplace_back(), depth + 1);
      }
      return;
    }
    case '[': {
      if (depth == kMaxDepth) fail(fmt::format("objects and arrays nested deeper than {}", kMaxDepth));
      out.type = JsonValue::Type::Array;
      Items items = array();
      while (items.next()) read_value(out.items.emplace_back(), depth + 1);
      return;
    }
    case '"': out.type = JsonValue::Type::String; read_string(out.text); return;
    case 't': out.type = JsonValue::Type::True; ++position_; read_literal("rue"); return;
    case 'f': out.type = JsonValue::Type::False; ++position_; read_literal("alse"); return;
    case 'n': out.type = JsonValue::Type::Null; ++position_; read_literal("ull"); return;
    default:
      if (c != '-' && !is_digit(c)) fail(fmt::format("expected a value, found {}", shown(c)));
      out.type = JsonValue::Type::Number;
      read_number(out.text);
  }
}

void JsonReader::skip_value() { skip_value(0); }

void JsonReader::skip_value(size_t depth) {
  const char c = peek();
  if (c == '{' || c == '[') {
    if (depth == kMaxDepth) fail(fmt::format("objects and arrays nested deeper than {}", kMaxDepth));
    if (c == '{') {
      Members members = object();
      std::string key;
      while (members.next(key)) skip_value(depth + 1);
    } else {
      Items items = array();
      while (items.next()) skip_value(depth + 1);
    }
    return;
  }
  JsonValue scalar;
  read_value(scalar, depth);
}

bool json_int(const std::string& text, int64_t& out) {
  if (text.empty() || text.find_first_of(".eE") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return false;
  out = value;
  return true;
}

bool json_uint(const std::string& text, uint64_t& out) {
  if (text.empty() || text[0] == '-' || text.find_first_of(".eE") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return false;
  out = value;
  return true;
}

bool json_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return false;
  out = value;
  return true;
}

bool json_us_to_ns(const std::string& text, int64_t& out) {
  if (text.find_first_of("eE") != std::string::npos) {  // rare: through a double, range-checked
    double us = 0;
    if (!json_double(text, us) || std::fabs(us) >= 9.2e15) return false;
    out = std::llround(us * 1000.0);
    return true;
  }
  const bool negative = !text.empty() && text[0] == '-';
  const size_t point = text.find('.');
  const std::string whole = text.substr(negative ? 1 : 0, point == std::string::npos ? std::string::npos
                                                                                      : point - (negative ? 1 : 0));
  int64_t us = 0;
  if (whole.empty() || !json_int(whole, us) || us > std::numeric_limits<int64_t>::max() / 1000 - 1) return false;
  int64_t fraction_ns = 0;
  if (point != std::string::npos) {
    const std::string fraction = text.substr(point + 1);
    for (size_t i = 0; i < 3; ++i) fraction_ns = fraction_ns * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
    if (fraction.size() > 3 && fraction[3] >= '5') ++fraction_ns;  // to the nearest nanosecond
  }
  const int64_t ns = us * 1000 + fraction_ns;
  out = negative ? -ns : ns;
  return true;
}

}  // namespace perfprof
