#pragma once
// Floating-point operation counts of operators from their input shapes, with the formulas of
// torch.profiler (with_flops=True) and torch.utils.flop_counter: multiply-adds count as 2.
//
// Only shapes are recorded ("Input Dims"), never the values of non-tensor arguments. That
// decides what can be counted:
// - Convolutions (aten::conv1d/2d/3d, aten::convolution, aten::_convolution) count 0: their
//   output size depends on stride, padding and dilation, which are int-list arguments and so
//   appear as [] in Input Dims. torch.profiler reads those values at record time instead.
//   convolution_flops() gives the count once the output shape is known from elsewhere.
// - aten::mul and aten::add count one operation per element of the broadcast of their first two
//   inputs (torch.profiler counts the elements of the first input only; the two agree unless
//   the first input is the one broadcast).
// - Ops not listed in flops_of count 0.
#include <cstdint>
#include <string_view>
#include <vector>

namespace perfprof {

using InputDims = std::vector<std::vector<int64_t>>;

// The shapes in a range's args (JSON object members without braces), e.g. from
// `"Input Dims": [[8, 64], [64, 64], []], "Input type": [...]` gives {{8, 64}, {64, 64}, {}}.
// Non-tensor inputs have empty shapes; so do tensor-list inputs (a list of shapes), which no
// formula here uses. Empty when the member is absent or malformed; never throws.
InputDims parse_input_dims(std::string_view args_json_members);

// The text of the "Input Dims" value ("[[8, 64], [64, 64], []]"), or empty when the member is
// absent or malformed.
std::string_view input_dims_text(std::string_view args_json_members);

// Operations of one call of `op_name` ("aten::mm") with input shapes `dims`; 0 for unknown ops,
// shapes that do not fit the op, negative sizes and counts beyond 64 bits.
uint64_t flops_of(std::string_view op_name, const InputDims& dims);

// A forward, non-transposed convolution: weight [C_out, C_in / groups, k...], output
// [N, C_out, out...]: 2 * N * C_out * prod(out) * (C_in / groups) * prod(k). 0 when the shapes
// do not fit each other.
uint64_t convolution_flops(const std::vector<int64_t>& weight, const std::vector<int64_t>& output);

}  // namespace perfprof
