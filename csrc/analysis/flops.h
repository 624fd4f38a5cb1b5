#pragma once
// Floating-point operation counts of operators from their inputs, with the formulas of
// torch.profiler (with_flops=True) and torch.utils.flop_counter: multiply-adds count as 2.
//
// The inputs are an operator's input shapes (ArgKey::InputDims) and, for convolutions, the
// values of its int and int-list arguments (ArgKey::ConcreteInputs), both recorded with
// record_shapes=True. Hence:
// - aten::conv1d/2d/3d count from input and weight shapes, stride, padding, dilation and groups,
//   given the concrete inputs too (flops_of on InputDims alone counts them 0). torch.profiler counts
//   conv2d only; conv1d/3d use the same formula. The ops they run as (aten::convolution,
//   aten::_convolution, aten::mkldnn_convolution, ...) count 0, so no convolution counts twice.
//   Like torch.profiler, they count 0 for unbatched inputs, for int lists of another length
//   than the spatial rank and for the padding="same"/"valid" overload, whose string torch 2.13
//   records as "" (a recorded "same" or "valid" would be understood).
// - aten::mul and aten::add count one operation per element of the broadcast of their first two
//   inputs (torch.profiler counts the elements of the first input only; the two agree unless
//   the first input is the one broadcast).
// - Ops not listed in flops_of count 0.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/args.h"

namespace perfprof {

using InputDims = std::vector<std::vector<int64_t>>;

// The values of the non-tensor inputs as torch prints them ("[2, 2]", "1"; "" for tensors), one
// per input: views into the trace's strings.
using ConcreteInputs = std::vector<std::string_view>;

// An operator's inputs, read from its typed args.
struct OperatorInputs {
  // Each input's sizes: {{8, 64}, {64, 64}, {}}. Non-tensor inputs have empty shapes; so do
  // tensor-list inputs (a list of shapes), which no formula here uses.
  InputDims dims;
  ConcreteInputs concrete;
};

// The inputs in `args` (empty members when it has none); `strings` are the texts its ids name.
OperatorInputs operator_inputs(const ArgSet& args, const std::vector<std::string>& strings);

// Operations of one call of `op_name` ("aten::mm") with `inputs`; 0 for unknown ops, inputs that
// do not fit the op, negative sizes and counts beyond 64 bits.
uint64_t flops_of(std::string_view op_name, const OperatorInputs& inputs);

// The same from the input shapes alone: convolutions count 0.
uint64_t flops_of(std::string_view op_name, const InputDims& dims);

// A forward, non-transposed convolution: weight [C_out, C_in / groups, k...], output
// [N, C_out, out...]: 2 * N * C_out * prod(out) * (C_in / groups) * prod(k). 0 when the shapes
// do not fit each other.
uint64_t convolution_flops(const std::vector<int64_t>& weight, const std::vector<int64_t>& output);

}  // namespace perfprof
