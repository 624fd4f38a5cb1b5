#pragma once
// A small strict JSON parser (RFC 8259) for checking exporter output: it rejects anything a
// conforming reader could reject (trailing commas, control characters or invalid UTF-8 in
// strings, lone surrogates, leading zeros, NaN, duplicate object keys, trailing text).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace perfprof::test {

struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object };

  Type type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string text;               // a string's decoded value, or a number as written
  std::vector<Json> items;        // array elements
  std::vector<std::string> keys;  // object member names, in document order
  std::vector<Json> values;       // object member values, parallel to keys

  bool is(Type t) const { return type == t; }
  // The member called `key`, or null if there is none (or this is not an object).
  const Json* find(std::string_view key) const;
  // The member called `key`; throws std::out_of_range if there is none.
  const Json& at(std::string_view key) const;
  // The member's string value, or "" if absent or not a string.
  std::string string_at(std::string_view key) const;
};

class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& what, size_t offset);
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

// Parses a complete document; throws JsonError with the byte offset of the first error.
Json parse_json(std::string_view text);

}  // namespace perfprof::test
