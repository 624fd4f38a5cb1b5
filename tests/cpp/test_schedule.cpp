#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "schedule/schedule.h"

namespace perfprof {
namespace {

ScheduleSpec make_spec(int64_t wait, int64_t warmup, int64_t active, int64_t repeat,
                       int64_t skip_first = 0, int64_t skip_first_wait = 0) {
  ScheduleSpec spec;
  spec.wait = wait;
  spec.warmup = warmup;
  spec.active = active;
  spec.repeat = repeat;
  spec.skip_first = skip_first;
  spec.skip_first_wait = skip_first_wait;
  return spec;
}

// Actions for steps 0..steps-1, as names, so a mismatch prints readably.
std::vector<std::string> actions(const ScheduleSpec& spec, int64_t steps) {
  const Schedule schedule(spec);
  std::vector<std::string> names;
  for (int64_t step = 0; step < steps; ++step) names.emplace_back(to_string(schedule.action_at(step)));
  return names;
}

using Names = std::vector<std::string>;

TEST(Schedule, WaitWarmupActiveOnceAfterSkipFirst) {
  const ScheduleSpec spec =
      make_spec(/*wait=*/1, /*warmup=*/1, /*active=*/2, /*repeat=*/1, /*skip_first=*/1);
  EXPECT_EQ(actions(spec, 8), (Names{"NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",
                                     "NONE", "NONE", "NONE"}));
}

TEST(Schedule, RepeatZeroCyclesForever) {
  const ScheduleSpec spec = make_spec(1, 1, 2, /*repeat=*/0);
  EXPECT_EQ(actions(spec, 12),
            (Names{"NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",  //
                   "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",  //
                   "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"}));
  const Schedule schedule(spec);
  EXPECT_EQ(schedule.action_at(4 * 100'000 + 1), ProfilerAction::Warmup);
  EXPECT_EQ(schedule.action_at(4 * 100'000 + 3), ProfilerAction::RecordAndSave);
}

TEST(Schedule, RepeatLimitsTheNumberOfCycles) {
  EXPECT_EQ(actions(make_spec(1, 0, 1, /*repeat=*/2), 7),
            (Names{"NONE", "RECORD_AND_SAVE", "NONE", "RECORD_AND_SAVE", "NONE", "NONE", "NONE"}));
}

TEST(Schedule, SingleActiveStepIsAlwaysRecordAndSave) {
  EXPECT_EQ(actions(make_spec(/*wait=*/1, /*warmup=*/0, /*active=*/1, /*repeat=*/0), 6),
            (Names{"NONE", "RECORD_AND_SAVE", "NONE", "RECORD_AND_SAVE", "NONE", "RECORD_AND_SAVE"}));
  EXPECT_EQ(actions(make_spec(0, 0, 1, 0), 3),
            (Names{"RECORD_AND_SAVE", "RECORD_AND_SAVE", "RECORD_AND_SAVE"}));
  EXPECT_EQ(actions(make_spec(0, 2, 1, 0), 6),
            (Names{"WARMUP", "WARMUP", "RECORD_AND_SAVE", "WARMUP", "WARMUP", "RECORD_AND_SAVE"}));
}

TEST(Schedule, SkipFirstWaitDropsOnlyTheFirstCyclesWait) {
  // Without skip_first_wait: one skipped step, then cycles of 2 wait, 1 warmup, 2 active.
  EXPECT_EQ(actions(make_spec(2, 1, 2, /*repeat=*/2, /*skip_first=*/1), 12),
            (Names{"NONE", "NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",  //
                   "NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE"}));
  // With it, the first cycle starts right at its warm-up. As in torch, the shortened first
  // cycle still counts towards repeat.
  EXPECT_EQ(actions(make_spec(2, 1, 2, /*repeat=*/2, /*skip_first=*/1, /*skip_first_wait=*/1), 12),
            (Names{"NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",  //
                   "NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",  //
                   "NONE", "NONE", "NONE"}));
}

// torch.profiler.schedule's schedule_fn, transcribed line by line (torch/profiler/profiler.py).
ProfilerAction torch_schedule_fn(const ScheduleSpec& s, int64_t step) {
  if (step < s.skip_first) return ProfilerAction::None;
  step -= s.skip_first;
  if (s.skip_first_wait != 0) step += s.wait;
  const int64_t num_steps = s.wait + s.warmup + s.active;
  if (s.repeat > 0 && static_cast<double>(step) / static_cast<double>(num_steps) >= s.repeat) {
    return ProfilerAction::None;
  }
  const int64_t mod_step = step % num_steps;
  if (mod_step < s.wait) return ProfilerAction::None;
  if (mod_step < s.wait + s.warmup) return ProfilerAction::Warmup;
  return mod_step < num_steps - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
}

TEST(Schedule, AgreesWithTorchForEveryCombination) {
  for (int64_t wait : {0, 1, 3})
    for (int64_t warmup : {0, 1, 2})
      for (int64_t active : {1, 2, 4})
        for (int64_t repeat : {0, 1, 3})
          for (int64_t skip_first : {0, 2})
            for (int64_t skip_first_wait : {0, 1}) {
              const ScheduleSpec spec =
                  make_spec(wait, warmup, active, repeat, skip_first, skip_first_wait);
              const Schedule schedule(spec);
              for (int64_t step = 0; step < 40; ++step) {
                ASSERT_EQ(schedule.action_at(step), torch_schedule_fn(spec, step))
                    << schedule.describe() << " at step " << step;
              }
            }
}

void expect_rejected(const ScheduleSpec& spec, const std::string& field) {
  try {
    Schedule schedule(spec);
    ADD_FAILURE() << "accepted " << schedule.describe() << "; expected an error naming " << field;
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("'" + field + "'"), std::string::npos)
        << "message does not name '" << field << "': " << error.what();
  }
}

TEST(Schedule, RejectsInvalidFieldsNamingThem) {
  const ScheduleSpec valid = make_spec(1, 1, 1, 1, 1, 1);
  EXPECT_NO_THROW(Schedule{valid});

  auto with = [&](int64_t ScheduleSpec::*field, int64_t value) {
    ScheduleSpec spec = valid;
    spec.*field = value;
    return spec;
  };
  expect_rejected(with(&ScheduleSpec::wait, -1), "wait");
  expect_rejected(with(&ScheduleSpec::warmup, -1), "warmup");
  expect_rejected(with(&ScheduleSpec::active, -1), "active");
  expect_rejected(with(&ScheduleSpec::active, 0), "active");
  expect_rejected(with(&ScheduleSpec::repeat, -1), "repeat");
  expect_rejected(with(&ScheduleSpec::skip_first, -1), "skip_first");
  expect_rejected(with(&ScheduleSpec::skip_first_wait, -1), "skip_first_wait");
}

TEST(Schedule, RejectsNegativeStep) {
  const Schedule schedule(make_spec(0, 0, 1, 0));
  EXPECT_THROW(schedule.action_at(-1), std::invalid_argument);
  EXPECT_EQ(schedule.action_at(0), ProfilerAction::RecordAndSave);
}

TEST(Schedule, DescribeListsEveryField) {
  EXPECT_EQ(Schedule(make_spec(1, 2, 3, 4, 5, 6)).describe(),
            "schedule(wait=1, active=3, warmup=2, repeat=4, skip_first=5, skip_first_wait=6)");
}

}  // namespace
}  // namespace perfprof
