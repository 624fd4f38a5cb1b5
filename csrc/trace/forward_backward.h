#pragma once
// Which forward operator each backward operator was run for: torch.profiler's "fwdbwd" links.
#include <cstddef>
#include <utility>
#include <vector>

#include "record/recorder.h"

namespace perfprof {

// (forward, backward) index pairs into `ranges`, decided as torch.profiler decides them: ranges
// with a sequence number are visited in order of their end; a forward operator is remembered
// under (its thread, sequence number), the latest-starting one winning; a backward operator
// takes the one remembered under (its forward thread, sequence number), which is then forgotten,
// so of several backward operators with one key (autograd's evaluate_function and the node inside
// it) the first to end gets the link. Pairs come in the order of the backward operators' ends.
std::vector<std::pair<size_t, size_t>> link_forward_backward(const std::vector<CompletedRange>& ranges);

}  // namespace perfprof
