#pragma once
// The text torch's profiler observers hand a range for each operator. The ITT observer passes the
// operator name; the NVTX observer (torch/csrc/profiler/util.cpp, getNvtxStr) appends fields:
//   "<name>[, seq = <n>][, op_id = <n>][, sizes = <shapes>][, input_op_ids = <list>]"
// where <shapes> is a nested list of input sizes such as "[[8, 64], [64, 64], []]".
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/args.h"

namespace perfprof {

struct OpText {
  std::string_view name;
  int64_t sequence = -1;    // autograd sequence number, -1 when absent
  std::string_view sizes;   // the shapes list, empty when absent
};

OpText parse_op_text(std::string_view text) noexcept;

// The ints in lists of `sizes` ("[[8, 64], [64], []]"), or nothing when it is not such a list
// (unbalanced brackets, anything but ints, commas and spaces) or out of memory.
std::optional<IntTree> parse_int_lists(std::string_view sizes) noexcept;

}  // namespace perfprof
