// The text torch's profiler observers give each operator range, parsed into name, sequence, shapes.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torch_hooks/op_text.h"

namespace perfprof {
namespace {

TEST(OpText, BareNameFromTheIttObserver) {
  const OpText op = parse_op_text("autograd::engine::evaluate_function: AddmmBackward0");
  EXPECT_EQ(op.name, "autograd::engine::evaluate_function: AddmmBackward0");
  EXPECT_EQ(op.sequence, -1);
  EXPECT_TRUE(op.sizes.empty());
}

TEST(OpText, NvtxTextWithSequenceAndShapes) {
  const OpText op = parse_op_text("aten::addmm, seq = 5, sizes = [[3], [2, 4], [4, 3], [], []]");
  EXPECT_EQ(op.name, "aten::addmm");
  EXPECT_EQ(op.sequence, 5);
  EXPECT_EQ(op.sizes, "[[3], [2, 4], [4, 3], [], []]");
}

TEST(OpText, OpIdsAndInputOpIdsAreSkipped) {
  const OpText op = parse_op_text("aten::mm, seq = 12, op_id = 7, sizes = [[2, 3], [3, 4]], input_op_ids = [(3,0)]");
  EXPECT_EQ(op.name, "aten::mm");
  EXPECT_EQ(op.sequence, 12);
  EXPECT_EQ(op.sizes, "[[2, 3], [3, 4]]");
}

TEST(OpText, ShapesWithoutSequence) {
  const OpText op = parse_op_text("aten::as_strided, sizes = [[3, 4], [], [], []]");
  EXPECT_EQ(op.name, "aten::as_strided");
  EXPECT_EQ(op.sequence, -1);
  EXPECT_EQ(op.sizes, "[[3, 4], [], [], []]");
}

TEST(OpText, MalformedSequenceIsIgnored) {
  EXPECT_EQ(parse_op_text("aten::mm, seq = x").sequence, -1);
  EXPECT_EQ(parse_op_text("aten::mm, seq = ").sequence, -1);
  EXPECT_EQ(parse_op_text("").name, "");
}

// An IntTree in preorder: list(n) is a list of n items, plain numbers are ints.
IntTree tree(std::initializer_list<std::pair<int64_t, bool>> nodes) {
  IntTree out;
  for (const auto& [value, is_list] : nodes) out.push_back({value, is_list});
  return out;
}
constexpr bool L = true, I = false;

TEST(IntLists, ReadsNestedListsOfInts) {
  EXPECT_EQ(parse_int_lists("[[8, 64], [64], []]"), tree({{3, L}, {2, L}, {8, I}, {64, I}, {1, L}, {64, I}, {0, L}}));
  EXPECT_EQ(parse_int_lists("[]"), tree({{0, L}}));
  EXPECT_EQ(parse_int_lists(" [ [ -1 ,4 ] ] "), tree({{1, L}, {2, L}, {-1, I}, {4, I}}));
  // A tensor list's shapes nest one level deeper.
  EXPECT_EQ(parse_int_lists("[[[2, 3], [4]], [7]]"),
            tree({{2, L}, {2, L}, {2, L}, {2, I}, {3, I}, {1, L}, {4, I}, {1, L}, {7, I}}));
  EXPECT_EQ(int_lists_of(*parse_int_lists("[[[2, 3], [4]], [7], 5]")), (std::vector<std::vector<int64_t>>{{}, {7}, {}}));
}

TEST(IntLists, GarbageGivesNothing) {
  for (const char* text : {"", "8, 64", "[[8, 64]", "[[8, 64]]]", "[\"x\"]", "[[1,]]", "[[,1]]", "[[1] [2]]",
                           "[[1.5]]", "[[-]]", "[[99999999999999999999]]", "[[[[[[[[", "]]]]", "[1] [2]", "[1]x"}) {
    EXPECT_EQ(parse_int_lists(text), std::nullopt) << text;
  }
}

TEST(IntLists, EveryTruncationOfAValidListIsSafe) {
  const std::string valid = "[[[2, 3], [4]], [8, 64], [-1], []]";
  for (size_t n = 0; n < valid.size(); ++n) {
    EXPECT_EQ(parse_int_lists(std::string_view(valid).substr(0, n)), std::nullopt) << n;
  }
  EXPECT_NE(parse_int_lists(valid), std::nullopt);
}

}  // namespace
}  // namespace perfprof
