#include "json_checker.h"

#include <cstdint>
#include <cstdlib>

#include "common/utf8.h"

namespace perfprof::test {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Json document() {
    Json value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("unexpected text after the document");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw JsonError(what, pos_); }

  bool at_end() const { return pos_ >= text_.size(); }
  unsigned char peek() const { return at_end() ? 0 : static_cast<unsigned char>(text_[pos_]); }

  void expect(char c) {
    if (peek() != static_cast<unsigned char>(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  Json parse_value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    skip_whitespace();
    switch (peek()) {
      case '{': return parse_object(depth);
      case '[': return parse_array(depth);
      case '"': {
        Json value;
        value.type = Json::Type::String;
        value.text = parse_string();
        return value;
      }
      case 't': return parse_literal("true", Json::Type::Bool, true);
      case 'f': return parse_literal("false", Json::Type::Bool, false);
      case 'n': return parse_literal("null", Json::Type::Null, false);
      default: return parse_number();
    }
  }

  Json parse_literal(std::string_view word, Json::Type type, bool boolean) {
    if (text_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
    Json value;
    value.type = type;
    value.boolean = boolean;
    return value;
  }

  Json parse_object(int depth) {
    Json object;
    object.type = Json::Type::Object;
    expect('{');
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return object;
    }
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("expected a member name");
      std::string key = parse_string();
      if (object.find(key)) fail("duplicate member \"" + key + "\"");
      skip_whitespace();
      expect(':');
      object.values.push_back(parse_value(depth + 1));
      object.keys.push_back(std::move(key));
      skip_whitespace();
      if (peek() == '}') {
        ++pos_;
        return object;
      }
      expect(',');
    }
  }

  Json parse_array(int depth) {
    Json array;
    array.type = Json::Type::Array;
    expect('[');
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return array;
    }
    while (true) {
      array.items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (peek() == ']') {
        ++pos_;
        return array;
      }
      expect(',');
    }
  }

  Json parse_number() {
    const size_t start = pos_;
    const auto digits = [&] {
      const size_t from = pos_;
      while (peek() >= '0' && peek() <= '9') ++pos_;
      return pos_ - from;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digits() == 0) {
      fail("invalid value");
    }
    if (peek() == '.') {
      ++pos_;
      if (digits() == 0) fail("digits expected after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) fail("digits expected in exponent");
    }
    if (peek() >= '0' && peek() <= '9') fail("leading zero");
    Json value;
    value.type = Json::Type::Number;
    value.text = std::string(text_.substr(start, pos_ - start));
    value.number = std::strtod(value.text.c_str(), nullptr);
    return value;
  }

  uint32_t parse_hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      code <<= 4;
      if (c >= '0' && c <= '9') code |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') code |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') code |= static_cast<uint32_t>(c - 'A' + 10);
      else fail("invalid hex digit in \\u escape");
    }
    return code;
  }


  uint32_t parse_escape() {
    const char c = text_[pos_++];
    switch (c) {
      case '"': return '"';
      case '\\': return '\\';
      case '/': return '/';
      case 'b': return '\b';
      case 'f': return '\f';
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'u': break;
      default: --pos_; fail("invalid escape");
    }
    const uint32_t code = parse_hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) fail("lone low surrogate");
    if (code < 0xD800 || code > 0xDBFF) return code;
    if (text_.substr(pos_, 2) != "\\u") fail("lone high surrogate");
    pos_ += 2;
    const uint32_t low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate without low surrogate");
    return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
  }

  // Consumes one raw UTF-8 sequence, failing on anything that is not valid UTF-8.
  void copy_utf8_sequence(std::string& out) {
    const unsigned char lead = peek();
    size_t length = 0;
    uint32_t code = 0, min_code = 0;
    if (lead >= 0xC2 && lead <= 0xDF) { length = 2; code = lead & 0x1F; min_code = 0x80; }
    else if (lead >= 0xE0 && lead <= 0xEF) { length = 3; code = lead & 0x0F; min_code = 0x800; }
    else if (lead >= 0xF0 && lead <= 0xF4) { length = 4; code = lead & 0x07; min_code = 0x10000; }
    else fail("invalid UTF-8 lead byte");
    if (pos_ + length > text_.size()) fail("truncated UTF-8 sequence");
    for (size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(text_[pos_ + k]);
      if ((byte & 0xC0) != 0x80) fail("invalid UTF-8 continuation byte");
      code = (code << 6) | (byte & 0x3F);
    }
    if (code < min_code) fail("overlong UTF-8 sequence");
    if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) fail("invalid code point");
    out.append(text_.data() + pos_, length);
    pos_ += length;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      const unsigned char c = peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("unescaped control character in string");
      if (c == '\\') {
        ++pos_;
        if (at_end()) fail("unterminated escape");
        append_utf8(out, parse_escape());
      } else if (c >= 0x80) {
        copy_utf8_sequence(out);
      } else {
        out += static_cast<char>(c);
        ++pos_;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

JsonError::JsonError(const std::string& what, size_t offset)
    : std::runtime_error("JSON error at offset " + std::to_string(offset) + ": " + what),
      offset_(offset) {}

const Json* Json::find(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &values[i];
  }
  return nullptr;
}

const Json& Json::at(std::string_view key) const {
  if (const Json* value = find(key)) return *value;
  throw std::out_of_range("no member \"" + std::string(key) + "\"");
}

std::string Json::string_at(std::string_view key) const {
  const Json* value = find(key);
  return value && value->is(Type::String) ? value->text : std::string();
}

Json parse_json(std::string_view text) { return Parser(text).document(); }

}  // namespace perfprof::test
