// Input Dims and Concrete Inputs parsing (including garbage) and the FLOP formulas against
// hand-worked numbers and torch's.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "analysis/flops.h"

namespace perfprof {
namespace {

TEST(ParseInputDims, ReadsTheShapesOfEveryInput) {
  EXPECT_EQ(parse_input_dims(R"("Input Dims": [[8, 64], [64, 64], []], "Input type": ["float", "float", "Scalar"])"),
            (InputDims{{8, 64}, {64, 64}, {}}));
  EXPECT_EQ(parse_input_dims(R"("Sequence number": 5,"Input Dims":[[1,2],[3]])"), (InputDims{{1, 2}, {3}}));
  EXPECT_EQ(parse_input_dims("\"Input Dims\" :\n [ [ -1 , 4 ] ]"), (InputDims{{-1, 4}}));
  EXPECT_EQ(parse_input_dims(R"("Input Dims": [])"), InputDims{});
}

TEST(ParseInputDims, TensorListsGetEmptyShapes) {
  EXPECT_EQ(parse_input_dims(R"("Input Dims": [[[2, 3], [4, 5]], [7], [[]]])"), (InputDims{{}, {7}, {}}));
}

TEST(ParseInputDims, TextOfTheValue) {
  EXPECT_EQ(input_dims_text(R"("Input Dims": [[8, 64], [64, 64], []], "Input type": ["float"])"),
            "[[8, 64], [64, 64], []]");
  EXPECT_EQ(input_dims_text(R"("Input type": ["float"])"), "");
  EXPECT_EQ(input_dims_text(R"("Input Dims": [[8, 64)"), "");
}

TEST(ParseInputDims, GarbageGivesNothing) {
  const char* garbage[] = {
      "",
      "\"Input Dims\"",
      "\"Input Dims\":",
      "\"Input Dims\": [",
      "\"Input Dims\": [[1, 2",
      "\"Input Dims\": [[1, 2]",
      "\"Input Dims\": [[1, x]]",
      "\"Input Dims\": [[1,]]",
      "\"Input Dims\": [[,1]]",
      "\"Input Dims\": [1, 2]",
      "\"Input Dims\": [[1] [2]]",
      "\"Input Dims\": \"[[1]]\"",
      "\"Input Dims\": [[99999999999999999999]]",
      "\"Input Dims\": [[1.5]]",
      "\"Input Dims\": [[-]]",
      "\"Input Dims\": [[[1], \"a\"]]",
      "\"Input Dims\": [[[[[[[[",
      "\"Input Dims\": ]]]]",
      "\"name\": \"\\\"Input Dims\\\": [[1]]\"",  // inside another member's string
      "Input Dims: [[1]]",
  };
  for (const char* text : garbage) EXPECT_EQ(parse_input_dims(text), InputDims{}) << text;
}

TEST(ParseInputDims, EveryTruncationOfValidArgsIsSafe) {
  const std::string valid = R"("Input Dims": [[[2, 3], [4]], [8, 64], [-1], []], "k": 1)";
  for (size_t n = 0; n < valid.size(); ++n) {
    const InputDims dims = parse_input_dims(std::string_view(valid).substr(0, n));
    const bool complete = n >= valid.find("]], \"k\"") + 2;
    EXPECT_EQ(dims.empty(), !complete) << n;
  }
}

TEST(ParseInputDims, RandomBytesNeverCrash) {
  const std::string alphabet = "[]0123456789,- \"\\:{}InputDims.x\n\xff";
  std::mt19937 random(12345);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<size_t> length(0, 60);
  for (int round = 0; round < 20000; ++round) {
    const char* prefixes[] = {"", "\"Input Dims\": ", "\"Concrete Inputs\": [\"\", \""};
    std::string text = prefixes[round % 3];
    for (size_t n = length(random); n > 0; --n) text += alphabet[pick(random)];
    const InputDims dims = parse_input_dims(text);
    (void)flops_of("aten::bmm", dims);
    (void)flops_of("aten::add", dims);
    (void)flops_of("aten::scaled_dot_product_attention", dims);
    (void)input_dims_text(text);
    (void)parse_concrete_inputs(text);
    (void)flops_of("aten::conv2d", text);
  }
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

TEST(Flops, ElementwiseCountsTheBroadcastOutput) {
  EXPECT_EQ(flops_of("aten::mul", {{8, 64}, {8, 64}}), 512u);
  EXPECT_EQ(flops_of("aten::add", {{8, 1}, {1, 64}, {}}), 512u);  // [] is alpha
  EXPECT_EQ(flops_of("aten::add", {{8, 64}, {}, {}}), 512u);       // tensor + scalar
  EXPECT_EQ(flops_of("aten::mul", {{1, 64}, {8, 64}}), 512u);      // torch.profiler says 64
  EXPECT_EQ(flops_of("aten::mul", {{8, 64}}), 512u);
  EXPECT_EQ(flops_of("aten::mul", {{8, 64}, {7, 64}}), 0u);
  EXPECT_EQ(flops_of("aten::mul", InputDims{}), 0u);
}

TEST(Flops, ScaledDotProductAttention) {
  // q [2, 4, 128, 64], k [2, 4, 256, 64], v [2, 4, 256, 32]:
  // 2*2*4*128*256*64 (Q K^T) + 2*2*4*128*256*32 (times V) = 33554432 + 16777216.
  const InputDims dims{{2, 4, 128, 64}, {2, 4, 256, 64}, {2, 4, 256, 32}, {}, {}};
  for (const char* op : {"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
                         "aten::_scaled_dot_product_efficient_attention",
                         "aten::_scaled_dot_product_flash_attention_for_cpu"}) {
    EXPECT_EQ(flops_of(op, dims), 50331648u) << op;
  }
  EXPECT_EQ(flops_of("aten::scaled_dot_product_attention", {{2, 4, 128, 64}, {2, 4, 256, 63}, {2, 4, 256, 32}}), 0u);
  EXPECT_EQ(flops_of("aten::scaled_dot_product_attention", {{2, 4, 128, 64}, {2, 4, 256, 64}}), 0u);
}

TEST(Flops, ConvolutionFromShapesAloneCountsZero) {
  // Stride and padding are not in Input Dims, so the output size, and the count, are unknown.
  EXPECT_EQ(flops_of("aten::conv2d", InputDims{{1, 3, 32, 32}, {16, 3, 3, 3}, {16}, {}, {}, {}, {}}), 0u);
  // weight [16, 3, 3, 3], output [1, 16, 30, 30]: 2 * 1 * 16 * 900 * 3 * 9.
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 16, 30, 30}), 777600u);
  // groups 4, C_in 16: weight [32, 4, 3, 3], output [2, 32, 8, 8]: 2 * 2 * 32 * 64 * 4 * 9.
  EXPECT_EQ(convolution_flops({32, 4, 3, 3}, {2, 32, 8, 8}), 294912u);
  EXPECT_EQ(convolution_flops({16, 3, 3}, {1, 16, 30}), 2u * 16 * 30 * 3 * 3);  // conv1d
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 8, 30, 30}), 0u);
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 16, 30}), 0u);
}

// Args as torch 2.13 writes them for aten::conv1d/2d/3d(input, weight, bias, stride, padding,
// dilation, groups).
std::string conv_args(const std::string& dims, const std::string& stride, const std::string& padding,
                      const std::string& dilation, const std::string& groups) {
  return R"("External id": 1, "Concrete Inputs": ["", "", "", ")" + stride + R"(", ")" + padding + R"(", ")" +
         dilation + R"(", ")" + groups +
         R"("], "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"], )" +
         R"("Input Dims": )" + dims;
}

TEST(ParseConcreteInputs, ReadsTheValueOfEveryInput) {
  EXPECT_EQ(parse_concrete_inputs(conv_args("[]", "[2, 2]", "[1, 1]", "[1, 1]", "1")),
            (ConcreteInputs{"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"}));
  EXPECT_EQ(parse_concrete_inputs(R"("Concrete Inputs":["a\"b", "False"])"), (ConcreteInputs{R"(a\"b)", "False"}));
  EXPECT_EQ(parse_concrete_inputs(R"("Concrete Inputs": [])"), ConcreteInputs{});
}

TEST(ParseConcreteInputs, GarbageGivesNothing) {
  const char* garbage[] = {
      "",
      "\"Concrete Inputs\": [",
      "\"Concrete Inputs\": [\"\"",
      "\"Concrete Inputs\": [\"1]",
      "\"Concrete Inputs\": [\"1\\\"]",
      "\"Concrete Inputs\": [\"1\\",
      "\"Concrete Inputs\": [1]",
      "\"Concrete Inputs\": [\"1\",]",
      "\"Concrete Inputs\": [\"1\" \"2\"]",
      "\"Concrete Inputs\": \"1\"",
      "\"name\": \"x, \\\"Concrete Inputs\\\": [\\\"1\\\"]\"",
  };
  for (const char* text : garbage) EXPECT_EQ(parse_concrete_inputs(text), ConcreteInputs{}) << text;
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

// Counts from torch.utils.flop_counter (torch.profiler counts conv1d/3d as 0).
TEST(Flops, Conv1dAndConv3d) {
  // x [2, 6, 50], w [8, 3, 5], stride 3, padding 2, dilation 2, groups 2: output [2, 8, 16].
  EXPECT_EQ(flops_of("aten::conv1d", conv_args("[[2, 6, 50], [8, 3, 5], [8], [], [], [], []]", "[3]", "[2]", "[2]",
                                               "2")),
            7680u);
  // x [1, 4, 6, 7, 8], w [2, 4, 3, 2, 3]: output [1, 2, 4, 3, 10].
  EXPECT_EQ(flops_of("aten::conv3d", conv_args("[[1, 4, 6, 7, 8], [2, 4, 3, 2, 3], [], [], [], [], []]",
                                               "[1, 2, 1]", "[1, 0, 2]", "[2, 1, 1]", "1")),
            34560u);
}

TEST(Flops, ConvolutionPaddingStrings) {
  const std::string dims = "[[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]";
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[1, 1]", "same", "[1, 1]", "1")), 13824u);  // output 8x8
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[1, 1]", "valid", "[1, 1]", "1")), 7776u);  // output 6x6
  EXPECT_EQ(flops_of("aten::conv2d", conv_args("[[2, 4, 9, 10], [6, 2, 4, 3], [6], [], [], [], []]", "[1, 1]",
                                               "same", "[2, 3]", "2")),
            51840u);
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[2, 2]", "same", "[1, 1]", "1")), 0u);  // torch rejects it
  // What torch 2.13 writes for padding="same" and "valid" alike; torch.profiler counts 0 too.
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[1, 1]", "", "[1, 1]", "1")), 0u);
  EXPECT_EQ(flops_of("aten::conv2d", conv_args(dims, "[1, 1]", "full", "[1, 1]", "1")), 0u);
}

TEST(Flops, ConvolutionIsCountedOnceAtTheTop) {
  // aten::conv2d runs as these, with the same concrete stride, padding and dilation.
  const std::string args =
      R"("Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"], )"
      R"("Input Dims": [[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], [], [], []])";
  for (const char* op : {"aten::convolution", "aten::_convolution", "aten::mkldnn_convolution",
                         "aten::_convolution_mode", "aten::thnn_conv2d"}) {
    EXPECT_EQ(flops_of(op, args), 0u) << op;
  }
}

TEST(Flops, ConvolutionKeyOrderDoesNotMatter) {
  const std::string dims = R"("Input Dims": [[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []])";
  const std::string concrete = R"("Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"])";
  EXPECT_EQ(flops_of("aten::conv2d", dims + ", " + concrete), 6912u);
  EXPECT_EQ(flops_of("aten::conv2d", concrete + ", " + dims), 6912u);
  EXPECT_EQ(flops_of("aten::conv2d", "\"Ev Idx\": 0,\n" + concrete + ",\"k\": 1, " + dims + ", \"x\": [1]"), 6912u);
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
  EXPECT_EQ(flops_of("aten::conv2d", R"("Input Dims": )" + dims), 0u);
  EXPECT_EQ(flops_of("aten::conv2d", R"("Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"])"), 0u);
  EXPECT_EQ(flops_of("aten::conv2d", R"("Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]"], "Input Dims": )" + dims), 0u);
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

TEST(Flops, EveryTruncationOfConvolutionArgsIsSafe) {
  const std::string valid = conv_args("[[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", "[2, 2]", "[1, 1]",
                                      "[1, 1]", "1");
  for (size_t n = 0; n < valid.size(); ++n) {
    const uint64_t count = flops_of("aten::conv2d", std::string_view(valid).substr(0, n));
    EXPECT_TRUE(count == 0 || count == 6912u) << n;
  }
  EXPECT_EQ(flops_of("aten::conv2d", valid), 6912u);
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
