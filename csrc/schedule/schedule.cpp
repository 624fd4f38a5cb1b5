#include "schedule/schedule.h"

#include <stdexcept>

#include <fmt/format.h>

namespace perfprof {
namespace {

void require_at_least(const char* field, int64_t value, int64_t minimum) {
  if (value < minimum) {
    throw std::invalid_argument(
        fmt::format("schedule: '{}' must be >= {}, got {}", field, minimum, value));
  }
}

}  // namespace

const char* to_string(ProfilerAction action) {
  switch (action) {
    case ProfilerAction::None: return "NONE";
    case ProfilerAction::Warmup: return "WARMUP";
    case ProfilerAction::Record: return "RECORD";
    case ProfilerAction::RecordAndSave: return "RECORD_AND_SAVE";
  }
  return "UNKNOWN";
}

Schedule::Schedule(const ScheduleSpec& spec) : spec_(spec) {
  require_at_least("wait", spec.wait, 0);
  require_at_least("active", spec.active, 1);
  require_at_least("warmup", spec.warmup, 0);
  require_at_least("repeat", spec.repeat, 0);
  require_at_least("skip_first", spec.skip_first, 0);
  require_at_least("skip_first_wait", spec.skip_first_wait, 0);
}

ProfilerAction Schedule::action_at(int64_t step) const {
  if (step < 0) throw std::invalid_argument(fmt::format("schedule: step must be >= 0, got {}", step));
  if (step < spec_.skip_first) return ProfilerAction::None;
  step -= spec_.skip_first;
  if (spec_.skip_first_wait != 0) step += spec_.wait;  // the first cycle starts at its warm-up
  const int64_t cycle = spec_.wait + spec_.warmup + spec_.active;
  if (spec_.repeat > 0 && step >= spec_.repeat * cycle) return ProfilerAction::None;
  const int64_t position = step % cycle;
  if (position < spec_.wait) return ProfilerAction::None;
  if (position < spec_.wait + spec_.warmup) return ProfilerAction::Warmup;
  return position < cycle - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
}

std::string Schedule::describe() const {
  return fmt::format("schedule(wait={}, active={}, warmup={}, repeat={}, skip_first={}, skip_first_wait={})",
                     spec_.wait, spec_.active, spec_.warmup, spec_.repeat, spec_.skip_first,
                     spec_.skip_first_wait);
}

}  // namespace perfprof
