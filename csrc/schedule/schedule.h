#pragma once
// The step schedule: which action the profiler takes at each step number. Step numbers and
// results agree with torch.profiler.schedule for every argument combination.
#include <cstdint>
#include <string>

namespace perfprof {

enum class ProfilerAction : int { None = 0, Warmup = 1, Record = 2, RecordAndSave = 3 };

const char* to_string(ProfilerAction action);

struct ScheduleSpec {
  int64_t wait = 0;
  int64_t active = 1;
  int64_t warmup = 0;
  int64_t repeat = 0;  // 0: cycles continue until the profiler stops
  int64_t skip_first = 0;
  int64_t skip_first_wait = 0;  // non-zero: the first cycle starts without its wait steps
};

class Schedule {
 public:
  // Throws std::invalid_argument naming the offending field.
  explicit Schedule(const ScheduleSpec& spec);

  // Throws std::invalid_argument for a negative step.
  ProfilerAction action_at(int64_t step) const;
  const ScheduleSpec& spec() const { return spec_; }
  std::string describe() const;

 private:
  ScheduleSpec spec_;
};

}  // namespace perfprof
