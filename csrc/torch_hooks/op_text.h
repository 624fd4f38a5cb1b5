#pragma once
// The text torch's profiler observers hand a range for each operator. The ITT observer passes the
// operator name; the NVTX observer (torch/csrc/profiler/util.cpp, getNvtxStr) appends fields:
//   "<name>[, seq = <n>][, op_id = <n>][, sizes = <shapes>][, input_op_ids = <list>]"
// where <shapes> is a nested list of input sizes such as "[[8, 64], [64, 64], []]".
#include <cstdint>
#include <string_view>

namespace perfprof {

struct OpText {
  std::string_view name;
  int64_t sequence = -1;    // autograd sequence number, -1 when absent
  std::string_view sizes;   // the shapes list, empty when absent
};

OpText parse_op_text(std::string_view text) noexcept;

// True when `sizes` holds only digits, '-', ',', ' ' and balanced brackets, so it can be written
// into JSON as it is.
bool is_json_int_lists(std::string_view sizes) noexcept;

}  // namespace perfprof
