#include "analysis/input_shapes.h"

#include <cstdint>
#include <vector>

namespace perfprof {

std::string input_shapes_text(const ArgSet& args) {
  const IntTree* dims = args.find<IntTree>(ArgKey::InputDims);
  if (dims == nullptr) return {};
  std::string text = "[";
  for (const std::vector<int64_t>& shape : int_lists_of(*dims)) {
    if (text.size() > 1) text += ", ";
    text += '[';
    for (size_t d = 0; d < shape.size(); ++d) {
      if (d > 0) text += ", ";
      text += std::to_string(shape[d]);
    }
    text += ']';
  }
  return text + ']';
}

}  // namespace perfprof
