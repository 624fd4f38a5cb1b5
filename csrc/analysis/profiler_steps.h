#pragma once
// The schedule's steps as a trace recorded them: its ProfilerStep#N ranges.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

struct ProfilerStep {
  std::string number;  // N of ProfilerStep#N
  bool finished = false;  // false: still running when recording ended (a capture cut short)
  int64_t begin_ns = 0;   // the range's, now_ns() clock
  int64_t end_ns = 0;     // unfinished: the window's end
};

// Every ProfilerStep#N range of `model`, in begin order.
std::vector<ProfilerStep> profiler_steps(const TraceModel& model);

}  // namespace perfprof
