#pragma once
// The schedule's steps as a trace recorded them: its ProfilerStep#N ranges.
//
// A step is a ProfilerStep#N range that ended at a step boundary (profile.step()). The range the
// profiler stopped in (the stretch after the last step boundary, which torch also records as a
// ProfilerStep#N) and one still running when recording ended (a capture cut short) are no steps:
// they are the run's tail (docs/analysis.md, "Steps").
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

struct ProfilerStep {
  std::string number;     // N of ProfilerStep#N
  bool finished = false;  // false: still running when recording ended (a capture cut short)
  bool stopped_in = false;  // the profiler stopped inside it (its end is the profiler's stop)
  int64_t begin_ns = 0;   // the range's, now_ns() clock
  int64_t end_ns = 0;     // unfinished: the window's end

  // Whether the range is a step: it ended at a step boundary.
  bool is_step() const { return finished && !stopped_in; }
};

// Every ProfilerStep#N range of `model`, in begin order, steps and tail alike.
std::vector<ProfilerStep> profiler_step_ranges(const TraceModel& model);

// The steps of `model` (the ranges that are steps), in begin order.
std::vector<ProfilerStep> profiler_steps(const TraceModel& model);

}  // namespace perfprof
