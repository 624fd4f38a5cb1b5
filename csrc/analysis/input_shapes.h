#pragma once
// torch's text of an operator's input shapes, as key_averages' input_shapes has it.
#include <string>

#include "common/args.h"

namespace perfprof {

// "[[8, 64], []]" from the args' InputDims (a tensor list counts as []), or empty without them.
std::string input_shapes_text(const ArgSet& args);

}  // namespace perfprof
