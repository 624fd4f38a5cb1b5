// Operator inputs read from typed args, and the FLOP formulas against hand-worked numbers and
// torch's (including garbage concrete values).
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/flops.h"
#include "torch_hooks/op_text.h"

namespace perfprof {
namespace {

// Each input's sizes, as the torch hooks read them from torch's text.
InputDims dims_of(std::string_view text) {
  const std::optional<IntTree> tree = parse_int_lists(text);
  EXPECT_TRUE(tree.has_value()) << text;
  return tree ? int_lists_of(*tree) : InputDims{};
}

TEST(OperatorInputs, ReadsShapesAndConcreteValuesFromTypedArgs) {
  const std::vector<std::string> strings{"", "float", "Scalar", "[2, 2]", "1"};
  ArgSet args;
  args.args.push_back({ArgKey::InputDims, *parse_int_lists("[[8, 64], [64, 64], []]")});
  args.args.push_back({ArgKey::InputTypes, std::vector<StringId>{1, 1, 2}});
  args.args.push_back({ArgKey::ConcreteInputs, std::vector<StringId>{0, 3, 4}});
  const OperatorInputs inputs = operator_inputs(args, strings);
  EXPECT_EQ(inputs.dims, (InputDims{{8, 64}, {64, 64}, {}}));
  EXPECT_EQ(inputs.concrete, (ConcreteInputs{"", "[2, 2]", "1"}));
}

TEST(OperatorInputs, MissingMembersGiveNothing) {
  const std::vector<std::string> strings{""};
  const OperatorInputs none = operator_inputs(ArgSet{}, strings);
  EXPECT_TRUE(none.dims.empty());
  EXPECT_TRUE(none.concrete.empty());
  ArgSet other;
  other.args.push_back({ArgKey::Domain, StringId{0}});
  EXPECT_TRUE(operator_inputs(other, strings).dims.empty());
}

TEST(OperatorInputs, TensorListsGetEmptyShapes) {
  EXPECT_EQ(dims_of("[[[2, 3], [4, 5]], [7], [[]]]"), (InputDims{{}, {7}, {}}));
  EXPECT_EQ(dims_of("[]"), InputDims{});
}

TEST(Flops, MatrixProducts) {
  EXPECT_EQ(flops_of("aten::mm", {{8, 64}, {64, 32}}), 2u * 8 * 64 * 32);  // 32768
  EXPECT_EQ(flops_of("aten::mm", {{8, 64}, {63, 32}}), 0u);                // inner sizes differ
  EXPECT_EQ(flops_of("aten::mm", {{2, 8, 64}, {64, 32}}), 0u);
  EXPECT_EQ(flops_of("aten::mm", {{8, 64}}), 0u);
  EXPECT_EQ(flops_of("aten::addmm", {{32}, {8, 64}, {64, 32}, {}, {}}), 32768u);
  EXPECT_EQ(flops_of("aten::bmm", {{4, 8, 64}, {4, 64, 32}}), 2u * 4 * 8 * 64 * 32);  // 131072
  EXPECT_EQ(flops_of("aten::bmm", {{4, 8, 64}, {3, 64, 32}}), 0u);
  EXPECT_EQ(flops_of("aten::baddbmm", {{4, 8, 32}, {4, 8, 64}, {4, 64, 32}, {}, {}}), 131072u);
}

TEST(Flops, CompositeOpsAreNotCountedTwice) {
  // matmul and linear run as mm/addmm/bmm, whose FLOPs are counted; counting both would double.
  EXPECT_EQ(flops_of("aten::matmul", {{8, 64}, {64, 32}}), 0u);
  EXPECT_EQ(flops_of("aten::linear", {{4, 16, 64}, {32, 64}, {32}}), 0u);
}

// torch.profiler counts the elements of the first input, not of the broadcast output (torch 2.13:
// [2, 3, 1] * [2, 3, 4] counts 6, [2, 3, 4] * [2, 3, 1] counts 24).
TEST(Flops, ElementwiseCountsTheFirstInput) {
  EXPECT_EQ(flops_of("aten::mul", {{8, 64}, {8, 64}}), 512u);
  EXPECT_EQ(flops_of("aten::mul", {{2, 3, 1}, {2, 3, 4}}), 6u);
  EXPECT_EQ(flops_of("aten::mul", {{2, 3, 4}, {2, 3, 1}}), 24u);
  EXPECT_EQ(flops_of("aten::add", {{8, 1}, {1, 64}, {}}), 8u);     // [] is alpha
  EXPECT_EQ(flops_of("aten::add", {{8, 64}, {}, {}}), 512u);       // tensor + scalar
  EXPECT_EQ(flops_of("aten::mul", {{}, {8, 64}}), 1u);             // a 0-dim tensor has one element
  EXPECT_EQ(flops_of("aten::mul", {{8, 64}}), 512u);
  EXPECT_EQ(flops_of("aten::mul", InputDims{}), 0u);
}

// torch.profiler counts none of the attention ops, outer or inner (their math runs in one
// kernel, not as counted ops): counting both the outer op and the one it runs as would double.
TEST(Flops, ScaledDotProductAttentionCountsZero) {
  const InputDims dims{{2, 4, 128, 64}, {2, 4, 256, 64}, {2, 4, 256, 32}, {}, {}};
  for (const char* op : {"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
                         "aten::_scaled_dot_product_efficient_attention",
                         "aten::_scaled_dot_product_flash_attention_for_cpu"}) {
    EXPECT_EQ(flops_of(op, dims), 0u) << op;
  }
}

TEST(Flops, ConvolutionFromShapesAloneCountsZero) {
  // Stride and padding are not in Input Dims, so the output size, and the count, are unknown.
  EXPECT_EQ(flops_of("aten::conv2d", InputDims{{1, 3, 32, 32}, {16, 3, 3, 3}, {16}, {}, {}, {}, {}}), 0u);
  // weight [16, 3, 3, 3], output [1, 16, 30, 30]: 2 * 1 * 16 * 900 * 3 * 9.
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 16, 30, 30}), 777600u);
  // groups 4, C_in 16: weight [32, 4, 3, 3], output [2, 32, 8, 8]: 2 * 2 * 32 * 64 * 4 * 9.
  EXPECT_EQ(convolution_flops({32, 4, 3, 3}, {2, 32, 8, 8}), 294912u);
  EXPECT_EQ(convolution_flops({16, 3, 3}, {1, 16, 30}), 2u * 16 * 30 * 3 * 3);  // any spatial rank
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 8, 30, 30}), 0u);
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 16, 30}), 0u);
}

// The inputs torch 2.13 records for aten::conv2d (and conv1d/3d)(input, weight, bias, stride, padding,
// dilation, groups). The concrete values are views of the arguments: pass texts that outlive
// the result (literals).
OperatorInputs conv_args(std::string_view dims, std::string_view stride, std::string_view padding,
                         std::string_view dilation, std::string_view groups) {
  return {dims_of(dims), {"", "", "", stride, padding, dilation, groups}};
}

// The counts torch.profiler(with_flops=True) gives for these aten::conv2d calls (torch 2.13).
TEST(Flops, Conv2dAgreesWithTorchProfiler) {
  // x [2, 3, 8, 8], w [4, 3, 3, 3], stride 2, padding 1: output [2, 4, 4, 4].
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", "[2, 2]",
                                               "[1, 1]", "[1, 1]", "1")),
            6912u);
  // x [1, 3, 32, 32], w [16, 3, 3, 3]: output [1, 16, 30, 30].
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[1, 3, 32, 32], [16, 3, 3, 3], [16], [], [], [], []]", "[1, 1]",
                                               "[0, 0]", "[1, 1]", "1")),
            777600u);
  // No bias.
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[1, 3, 10, 10], [4, 3, 3, 3], [], [], [], [], []]", "[1, 1]",
                                               "[0, 0]", "[1, 1]", "1")),
            13824u);
  // Stride, padding and dilation differing per dimension, groups 4: output [2, 32, 7, 6].
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[2, 16, 15, 17], [32, 4, 3, 5], [32], [], [], [], []]", "[2, 3]",
                                               "[1, 2]", "[2, 1]", "4")),
            322560u);
  // Depthwise (groups 8), dilation 2: output [3, 8, 16, 16].
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[3, 8, 20, 20], [8, 1, 5, 5], [8], [], [], [], []]", "[1, 1]",
                                               "[2, 2]", "[2, 2]", "8")),
            307200u);
  // No bias, groups 3, stride 3 with dilation 4: output [4, 9, 3, 13].
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[4, 6, 11, 13], [9, 2, 2, 4], [], [], [], [], []]", "[3, 1]",
                                               "[0, 3]", "[4, 2]", "3")),
            44928u);
}

// torch.profiler counts conv2d only, and only with int-list padding.
TEST(Flops, Conv1dConv3dAndPaddingStringsCountZero) {
  EXPECT_EQ(flops_of("aten::conv1d", conv_args("[[2, 6, 50], [8, 3, 5], [8], [], [], [], []]", "[3]", "[2]", "[2]",
                                               "2")),
            0u);
  EXPECT_EQ(flops_of("aten::conv3d", conv_args("[[1, 4, 6, 7, 8], [2, 4, 3, 2, 3], [], [], [], [], []]",
                                               "[1, 2, 1]", "[1, 0, 2]", "[2, 1, 1]", "1")),
            0u);
  const std::string dims = "[[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]";
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[1, 1]", "[1, 1]", "[1, 1]", "1")), 13824u);  // the baseline
  for (const char* padding : {"same", "valid", "", "full"}) {
    EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[1, 1]", padding, "[1, 1]", "1")), 0u) << padding;
  }
}

TEST(Flops, ConvolutionIsCountedOnceAtTheTop) {
  // aten::conv2d runs as these, with the same concrete stride, padding and dilation.
  const OperatorInputs inputs{dims_of("[[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], [], [], []]"),
                              {"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"}};
  for (const char* op : {"aten::convolution", "aten::_convolution", "aten::mkldnn_convolution",
                         "aten::_convolution_mode", "aten::thnn_conv2d"}) {
    EXPECT_EQ(flops_of(op, inputs), 0u) << op;
  }
}

TEST(Flops, ConvolutionWithBadArgumentsCountsZero) {
  const std::string dims = "[[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]";
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[2, 2]", "[1, 1]", "[1, 1]", "1")), 6912u);  // the baseline
  const char* bad_lists[] = {"", "[2]", "[2, 2, 2]", "[2, x]", "[2, 2", "2", "[2, 2] 1", "[[2], [2]]", "[2.5, 2]",
                             "[0, 2]", "[-2, 2]", "[99999999999999999999, 2]"};
  for (const char* list : bad_lists) {
    EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, list, "[1, 1]", "[1, 1]", "1")), 0u) << "stride " << list;
    EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[2, 2]", "[1, 1]", list, "1")), 0u) << "dilation " << list;
    if (std::string(list) != "[0, 2]") {
      EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[2, 2]", list, "[1, 1]", "1")), 0u) << "padding " << list;
    }
  }
  for (const char* groups : {"", "0", "-1", "3", "x", "1 1", "[1]", "1.0"}) {
    EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[2, 2]", "[1, 1]", "[1, 1]", groups)), 0u) << groups;
  }
  // Missing members, too few concrete inputs, unbatched input, shapes not fitting.
  EXPECT_EQ(flops_of("aten::conv2d", OperatorInputs{dims_of(dims), {}}), 0u);
  EXPECT_EQ(flops_of("aten::conv2d", OperatorInputs{{}, {"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"}}), 0u);
  EXPECT_EQ(flops_of("aten::conv2d", OperatorInputs{dims_of(dims), {"", "", "", "[2, 2]", "[1, 1]", "[1, 1]"}}), 0u);
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", "[2, 2]", "[1, 1]",
                                               "[1, 1]", "1")),
            0u);
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[2, 5, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", "[2, 2]", "[1, 1]",
                                               "[1, 1]", "1")),
            0u);  // C_in differs
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[2, 3, 2, 2], [4, 3, 3, 3], [4], [], [], [], []]", "[1, 1]", "[0, 0]",
                                               "[1, 1]", "1")),
            0u);  // kernel larger than the input
  EXPECT_EQ(flops_of("aten::conv1d", conv_args(dims, "[2, 2]", "[1, 1]", "[1, 1]", "1")), 0u);  // a 2d shape
  const std::string huge = "[[999999999999999999, 3, 8, 8], [999999999999999999, 3, 3, 3], [], [], [], [], []]";
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(huge, "[1, 1]", "[0, 0]", "[1, 1]", "1")), 0u);  // overflow
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[1, 1]", "[999999999999999999, 0]", "[1, 1]", "1")), 0u);
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[2, 3, 8, 8], [4, 3, 999999999999999999, 3], [4], [], [], [], []]",
                                               "[1, 1]", "[0, 0]", "[999999999999999999, 1]", "1")),
            0u);
}

TEST(Flops, RandomConcreteValuesNeverCrash) {
  const std::string alphabet = "[]0123456789,- .x\xff";
  std::mt19937 random(12345);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<size_t> length(0, 12);
  const InputDims dims = dims_of("[[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]");
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::string> texts(7);
    for (std::string& text : texts) {
      for (size_t n = length(random); n > 0; --n) text += alphabet[pick(random)];
    }
    (void)flops_of("aten::conv2d", OperatorInputs{dims, {texts.begin(), texts.end()}});
  }
}

TEST(Flops, UnknownOpsBadSizesAndOverflowCountZero) {
  EXPECT_EQ(flops_of("aten::relu", {{8, 64}}), 0u);
  EXPECT_EQ(flops_of("", InputDims{}), 0u);
  EXPECT_EQ(flops_of("aten::mm", {{-8, 64}, {64, 32}}), 0u);
  const int64_t huge = int64_t{1} << 40;
  EXPECT_EQ(flops_of("aten::mm", {{huge, huge}, {huge, huge}}), 0u);
  EXPECT_EQ(flops_of("aten::mul", {{huge, huge}}), 0u);
}

}  // namespace
}  // namespace perfprof
