// Input Dims parsing (including garbage) and the FLOP formulas against hand-worked numbers.
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
    std::string text = round % 2 ? "\"Input Dims\": " : "";
    for (size_t n = length(random); n > 0; --n) text += alphabet[pick(random)];
    const InputDims dims = parse_input_dims(text);
    (void)flops_of("aten::bmm", dims);
    (void)flops_of("aten::add", dims);
    (void)flops_of("aten::scaled_dot_product_attention", dims);
    (void)input_dims_text(text);
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
  EXPECT_EQ(flops_of("aten::mul", {}), 0u);
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

TEST(Flops, ConvolutionNeedsTheOutputShape) {
  // Stride and padding are not in Input Dims, so the output size, and the count, are unknown.
  EXPECT_EQ(flops_of("aten::conv2d", {{1, 3, 32, 32}, {16, 3, 3, 3}, {16}, {}, {}, {}, {}}), 0u);
  EXPECT_EQ(flops_of("aten::convolution", {{1, 3, 32, 32}, {16, 3, 3, 3}, {16}, {}, {}, {}, {}, {}, {}}), 0u);
  // weight [16, 3, 3, 3], output [1, 16, 30, 30]: 2 * 1 * 16 * 900 * 3 * 9.
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 16, 30, 30}), 777600u);
  // groups 4, C_in 16: weight [32, 4, 3, 3], output [2, 32, 8, 8]: 2 * 2 * 32 * 64 * 4 * 9.
  EXPECT_EQ(convolution_flops({32, 4, 3, 3}, {2, 32, 8, 8}), 294912u);
  EXPECT_EQ(convolution_flops({16, 3, 3}, {1, 16, 30}), 2u * 16 * 30 * 3 * 3);  // conv1d
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 8, 30, 30}), 0u);
  EXPECT_EQ(convolution_flops({16, 3, 3, 3}, {1, 16, 30}), 0u);
}

TEST(Flops, UnknownOpsBadSizesAndOverflowCountZero) {
  EXPECT_EQ(flops_of("aten::relu", {{8, 64}}), 0u);
  EXPECT_EQ(flops_of("", {}), 0u);
  EXPECT_EQ(flops_of("aten::mm", {{-8, 64}, {64, 32}}), 0u);
  const int64_t huge = int64_t{1} << 40;
  EXPECT_EQ(flops_of("aten::mm", {{huge, huge}, {huge, huge}}), 0u);
  EXPECT_EQ(flops_of("aten::mul", {{huge, huge}}), 0u);
}

}  // namespace
}  // namespace perfprof
