// The text torch's profiler observers give each operator range, parsed into name, sequence, shapes.
#include <gtest/gtest.h>

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

TEST(OpText, OnlyIntegerListsPassAsJson) {
  EXPECT_TRUE(is_json_int_lists("[[8, 64], [64], []]"));
  EXPECT_TRUE(is_json_int_lists("[]"));
  EXPECT_FALSE(is_json_int_lists("[[8, 64]"));
  EXPECT_FALSE(is_json_int_lists("[[8, 64]]]"));
  EXPECT_FALSE(is_json_int_lists("[\"x\"]"));
  EXPECT_FALSE(is_json_int_lists(""));
  EXPECT_FALSE(is_json_int_lists("8, 64"));
}

}  // namespace
}  // namespace perfprof
