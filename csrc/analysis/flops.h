#pragma once
// Floating-point operation counts of operators from their inputs: torch.profiler's
// (with_flops=True; torch/csrc/profiler/util.cpp computeFlops), op for op, so a run reads the
// same FLOPs in both. Multiply-adds count as 2.
//
// The inputs are an operator's input shapes (ArgKey::InputDims) and, for aten::conv2d, the
// values of its int and int-list arguments (ArgKey::ConcreteInputs), both recorded with
// record_shapes=True. The ops torch counts, and how:
// - aten::mm, aten::addmm: 2 * M * K * N of the two matrices (addmm's inputs 1 and 2).
// - aten::bmm, aten::baddbmm: 2 * B * M * K * N of the two batches (baddbmm's inputs 1 and 2).
// - aten::mul, aten::add: one operation per element of the first input, not of the broadcast
//   output ([2, 3, 1] * [2, 3, 4] counts 6).
// - aten::conv2d: 2 * N * C_out * H_out * W_out * (C_in / groups) * kH * kW, from input and weight
//   shapes, stride, padding, dilation and groups (flops_of on InputDims alone counts it 0). Like
//   torch.profiler it counts 0 for unbatched inputs, for int lists not of two ints and for the
//   padding="same"/"valid" overload. The ops it runs as (aten::convolution, ...) count 0.
// - Every other op counts 0, composite ops too: aten::matmul and aten::linear run as the ops above,
//   which are counted once there; scaled-dot-product attention, conv1d and conv3d count 0, as in
//   torch.profiler.
// Inputs the op rejects (mismatched sizes: the call raised) count 0, as do negative sizes and
// counts beyond 64 bits (torch's unsigned arithmetic wraps around there).
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

// Operations of one call of `op_name` ("aten::mm") with `inputs`; 0 for ops torch.profiler does
// not count, inputs that do not fit the op, negative sizes and counts beyond 64 bits.
uint64_t flops_of(std::string_view op_name, const OperatorInputs& inputs);

// The same from the input shapes alone: aten::conv2d counts 0.
uint64_t flops_of(std::string_view op_name, const InputDims& dims);

// A forward, non-transposed convolution: weight [C_out, C_in / groups, k...], output
// [N, C_out, out...]: 2 * N * C_out * prod(out) * (C_in / groups) * prod(k). 0 when the shapes
// do not fit each other.
uint64_t convolution_flops(const std::vector<int64_t>& weight, const std::vector<int64_t>& output);

}  // namespace perfprof
