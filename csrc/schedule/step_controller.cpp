#include "schedule/step_controller.h"

namespace perfprof {

std::vector<Transition> transitions_between(ProfilerAction previous,
                                            std::optional<ProfilerAction> next) {
  using A = ProfilerAction;
  using T = Transition;
  if (!next) {  // profiler stop
    switch (previous) {
      case A::None: return {};
      case A::Warmup: return {T::StartTrace, T::StopTrace};
      case A::Record:
      case A::RecordAndSave: return {T::StopTrace, T::TraceReady};
    }
  }
  switch (previous) {
    case A::None:
      switch (*next) {
        case A::None: return {};
        case A::Warmup: return {T::PrepareTrace};
        case A::Record:
        case A::RecordAndSave: return {T::PrepareTrace, T::StartTrace};
      }
      break;
    case A::Warmup:
      switch (*next) {
        case A::None: return {T::WarnIncorrectSchedule, T::StartTrace, T::StopTrace};
        case A::Warmup: return {};
        case A::Record:
        case A::RecordAndSave: return {T::StartTrace};
      }
      break;
    case A::Record:
      switch (*next) {
        case A::None:
        case A::Warmup: return {T::WarnIncorrectSchedule, T::StopTrace};
        case A::Record:
        case A::RecordAndSave: return {};
      }
      break;
    case A::RecordAndSave:
      switch (*next) {
        case A::None: return {T::StopTrace, T::TraceReady};
        case A::Warmup: return {T::StopTrace, T::TraceReady, T::PrepareTrace};
        case A::Record:
        case A::RecordAndSave:
          return {T::StopTrace, T::TraceReady, T::PrepareTrace, T::StartTrace};
      }
      break;
  }
  return {};
}

std::vector<Transition> StepController::start(ProfilerAction first) {
  previous_ = ProfilerAction::None;
  current_ = first;
  return transitions_between(ProfilerAction::None, first);
}

std::vector<Transition> StepController::advance(ProfilerAction next) {
  ++step_;
  previous_ = current_;
  current_ = next;
  return transitions_between(previous_, next);
}

std::vector<Transition> StepController::stop() {
  previous_ = current_;
  return transitions_between(current_, std::nullopt);
}

}  // namespace perfprof
