#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "common/json_text.h"
#include "json_checker.h"

namespace perfprof {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

std::string json_string(std::string_view text) {
  std::string out = "prefix:";  // appends, never overwrites
  append_json_string(out, text);
  EXPECT_EQ(out.substr(0, 7), "prefix:");
  return out.substr(7);
}

// Runs of U+FFFD collapsed to one, so invalid input is checked without fixing how many
// replacement characters one invalid sequence becomes.
std::string collapse_replacements(std::string text) {
  const std::string twice = std::string(kReplacement) + std::string(kReplacement);
  for (size_t at; (at = text.find(twice)) != std::string::npos;) text.erase(at, kReplacement.size());
  return text;
}

// The decoded value of the JSON string literal, via the strict checker.
std::string decoded(const std::string& literal) { return test::parse_json(literal).text; }

std::string ns_as_us(int64_t ns) {
  std::string out;
  append_ns_as_us(out, ns);
  return out;
}

std::string number(double value) {
  std::string out;
  append_json_number(out, value);
  return out;
}

TEST(JsonString, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_string("plain text"), "\"plain text\"");
  EXPECT_EQ(json_string(""), "\"\"");
  EXPECT_EQ(json_string("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(json_string("C:\\path"), R"("C:\\path")");
  EXPECT_EQ(json_string("a\nb\rc\td\be\ff"), R"("a\nb\rc\td\be\ff")");
  EXPECT_EQ(json_string(std::string_view("\x01\x1f\0", 3)), R"("\u0001\u001f\u0000")");
  EXPECT_EQ(json_string("/ and \x7f pass"), "\"/ and \x7f pass\"");
}

TEST(JsonString, EveryByteValueGivesValidJson) {
  for (int c = 0; c < 256; ++c) {
    const std::string text = "<" + std::string(1, static_cast<char>(c)) + ">";
    const std::string literal = json_string(text);
    ASSERT_NO_THROW(test::parse_json(literal)) << "byte " << c << ": " << literal;
    if (c < 0x80) {
      EXPECT_EQ(decoded(literal), text) << "byte " << c;
    }
  }
}

TEST(JsonString, KeepsValidMultiByteUtf8) {
  for (const std::string_view text :
       {"h\xC3\xA9llo", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80 emoji", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_EQ(json_string(text), "\"" + std::string(text) + "\"");
  }
}

TEST(JsonString, ReplacesInvalidUtf8) {
  const std::string r(kReplacement);
  EXPECT_EQ(json_string("a\xFF" "b"), "\"a" + r + "b\"");
  struct Case {
    std::string_view input, expected;
  };
  const Case cases[] = {
      {"a\xE6\x97", "a\xEF\xBF\xBD"},                            // truncated at the end
      {"a\xE6\x97" "b", "a\xEF\xBF\xBD" "b"},                    // truncated before ASCII
      {"\xE6\xE6\x97\xA5", "\xEF\xBF\xBD\xE6\x97\xA5"},          // truncated before a valid char
      {"a\xC0\x80" "b", "a\xEF\xBF\xBD" "b"},                    // overlong NUL
      {"a\xE0\x80\xAF" "b", "a\xEF\xBF\xBD" "b"},                // overlong '/'
      {"a\xED\xA0\x80" "b", "a\xEF\xBF\xBD" "b"},                // UTF-8-encoded surrogate
      {"a\xF4\x90\x80\x80" "b", "a\xEF\xBF\xBD" "b"},            // above U+10FFFF
      {"\x80\xBF", "\xEF\xBF\xBD"},                              // lone continuation bytes
  };
  for (const Case& c : cases) {
    const std::string literal = json_string(c.input);
    ASSERT_NO_THROW(test::parse_json(literal)) << literal;
    EXPECT_EQ(collapse_replacements(decoded(literal)), c.expected) << literal;
  }
}

TEST(JsonNumbers, NanosecondsAsMicrosecondsWithThreeDecimals) {
  EXPECT_EQ(ns_as_us(1234567), "1234.567");
  EXPECT_EQ(ns_as_us(5), "0.005");
  EXPECT_EQ(ns_as_us(0), "0.000");
  EXPECT_EQ(ns_as_us(1000), "1.000");
  EXPECT_EQ(ns_as_us(1234056), "1234.056");
  EXPECT_EQ(ns_as_us(-1500), "-1.500");
  EXPECT_EQ(ns_as_us(-5), "-0.005");
  EXPECT_EQ(ns_as_us(1'700'000'000'123'456'789), "1700000000123456.789");
}

TEST(JsonNumbers, DoublesAndNonFiniteValues) {
  EXPECT_EQ(number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(number(-std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(number(1.5), "1.5");
  EXPECT_EQ(number(-0.25), "-0.25");
  EXPECT_EQ(number(3), "3");
  for (const double value : {0.1, 1e300, -2.5e-300, 123456789.125, 5e-324}) {
    const test::Json parsed = test::parse_json(number(value));
    EXPECT_EQ(parsed.number, value) << number(value);  // shortest round-trip form
  }
}

TEST(JsonNumbers, Integers) {
  std::string out;
  append_int(out, -42);
  out += ',';
  append_int(out, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(out, "-42,9223372036854775807");
}

}  // namespace
}  // namespace perfprof
