#pragma once
// The profiler's step state machine: given the action of the step being left and of the step
// being entered, the ordered list of things the profiler must do. Mirrors torch.profiler.profile
// so that callbacks fire at the same steps.
#include <cstdint>
#include <optional>
#include <vector>

#include "schedule/schedule.h"

namespace perfprof {

enum class Transition : int {
  PrepareTrace = 0,  // start collection; what it records is discarded (warm-up)
  StartTrace = 1,    // discard warm-up data; keep from here on
  StopTrace = 2,     // stop collection and build the trace of the cycle
  TraceReady = 3,    // hand the trace to on_trace_ready
  WarnIncorrectSchedule = 4,  // the schedule skipped a phase (e.g. WARMUP followed by NONE)
};

// `next` is empty when the profiler stops.
std::vector<Transition> transitions_between(ProfilerAction previous,
                                            std::optional<ProfilerAction> next);

class StepController {
 public:
  // Actions to run at profiler start, entering `first` (the action for step 0).
  std::vector<Transition> start(ProfilerAction first);
  // Actions to run when step() moves to the next step, whose action is `next`.
  std::vector<Transition> advance(ProfilerAction next);
  // Actions to run at profiler stop.
  std::vector<Transition> stop();

  int64_t step() const { return step_; }
  // Renumbers the current step (torch.profiler's writable step_num); the actions stay as they are.
  void set_step(int64_t step) { step_ = step; }
  ProfilerAction current() const { return current_; }
  ProfilerAction previous() const { return previous_; }

 private:
  int64_t step_ = 0;
  ProfilerAction current_ = ProfilerAction::None;
  ProfilerAction previous_ = ProfilerAction::None;
};

}  // namespace perfprof
