// The JSON checker must reject what a strict reader rejects, or the exporter tests that rely on
// it would prove nothing.
#include <gtest/gtest.h>

#include "json_checker.h"

namespace perfprof::test {
namespace {

TEST(JsonChecker, ParsesNestedDocument) {
  const Json doc = parse_json(
      R"( {"a": [1, -2.5e3, 0.125, true, false, null], "b": {"c": "x\"\\\n\u00e9\ud83d\ude00"}} )");
  ASSERT_TRUE(doc.is(Json::Type::Object));
  const Json& a = doc.at("a");
  ASSERT_EQ(a.items.size(), 6u);
  EXPECT_EQ(a.items[0].number, 1);
  EXPECT_EQ(a.items[1].number, -2500);
  EXPECT_EQ(a.items[1].text, "-2.5e3");
  EXPECT_TRUE(a.items[3].boolean);
  EXPECT_TRUE(a.items[5].is(Json::Type::Null));
  EXPECT_EQ(doc.at("b").string_at("c"), "x\"\\\n\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(JsonChecker, RejectsInvalidDocuments) {
  const char* const invalid[] = {
      "",
      "[1,]",
      "{\"a\":1,}",
      "{\"a\":1 \"b\":2}",
      "[01]",
      "[1.]",
      "[.5]",
      "[NaN]",
      "[nul]",
      "{\"a\":1,\"a\":2}",
      "[\"tab\there\"]",
      "[\"bad escape \\x\"]",
      "[\"lone \\ud800\"]",
      "[\"lone \\udc00\"]",
      "[\"\xFF\"]",
      "[\"\xC0\x80\"]",
      "[\"\xED\xA0\x80\"]",
      "[\"\xE6\x97\"]",
      "[1] 2",
      "{'a': 1}",
  };
  for (const char* text : invalid) {
    EXPECT_THROW(parse_json(text), JsonError) << "accepted: " << text;
  }
}

}  // namespace
}  // namespace perfprof::test
