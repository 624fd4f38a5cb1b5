#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "schedule/schedule.h"
#include "schedule/step_controller.h"

namespace perfprof {
namespace {

using A = ProfilerAction;
using T = Transition;
using Transitions = std::vector<Transition>;

std::string name_of(Transition t) {
  switch (t) {
    case T::PrepareTrace: return "PrepareTrace";
    case T::StartTrace: return "StartTrace";
    case T::StopTrace: return "StopTrace";
    case T::TraceReady: return "TraceReady";
    case T::WarnIncorrectSchedule: return "WarnIncorrectSchedule";
  }
  return "?";
}

std::string describe(const Transitions& transitions) {
  std::string text = "{";
  for (const Transition t : transitions) text += (text.size() > 1 ? ", " : "") + name_of(t);
  return text + "}";
}

struct Row {
  ProfilerAction previous;
  std::optional<ProfilerAction> next;  // empty: profiler stop
  Transitions expected;
};

// torch.profiler.profile's action map, every pair plus stop from each action.
const Row kTable[] = {
    {A::None, A::None, {}},
    {A::None, A::Warmup, {T::PrepareTrace}},
    {A::None, A::Record, {T::PrepareTrace, T::StartTrace}},
    {A::None, A::RecordAndSave, {T::PrepareTrace, T::StartTrace}},
    {A::Warmup, A::None, {T::WarnIncorrectSchedule, T::StartTrace, T::StopTrace}},
    {A::Warmup, A::Warmup, {}},
    {A::Warmup, A::Record, {T::StartTrace}},
    {A::Warmup, A::RecordAndSave, {T::StartTrace}},
    {A::Record, A::None, {T::WarnIncorrectSchedule, T::StopTrace}},
    {A::Record, A::Warmup, {T::WarnIncorrectSchedule, T::StopTrace}},
    {A::Record, A::Record, {}},
    {A::Record, A::RecordAndSave, {}},
    {A::RecordAndSave, A::None, {T::StopTrace, T::TraceReady}},
    {A::RecordAndSave, A::Warmup, {T::StopTrace, T::TraceReady, T::PrepareTrace}},
    {A::RecordAndSave, A::Record, {T::StopTrace, T::TraceReady, T::PrepareTrace, T::StartTrace}},
    {A::RecordAndSave, A::RecordAndSave,
     {T::StopTrace, T::TraceReady, T::PrepareTrace, T::StartTrace}},
    {A::None, std::nullopt, {}},
    {A::Warmup, std::nullopt, {T::StartTrace, T::StopTrace}},
    {A::Record, std::nullopt, {T::StopTrace, T::TraceReady}},
    {A::RecordAndSave, std::nullopt, {T::StopTrace, T::TraceReady}},
};

TEST(Transitions, MatchTorchForEveryPairAndStop) {
  for (const Row& row : kTable) {
    const Transitions actual = transitions_between(row.previous, row.next);
    EXPECT_EQ(describe(actual), describe(row.expected))
        << to_string(row.previous) << " -> " << (row.next ? to_string(*row.next) : "stop");
  }
}

TEST(StepController, TracksStepAndActions) {
  StepController controller;
  EXPECT_EQ(describe(controller.start(A::Warmup)), describe({T::PrepareTrace}));
  EXPECT_EQ(controller.step(), 0);
  EXPECT_EQ(controller.current(), A::Warmup);

  EXPECT_EQ(describe(controller.advance(A::RecordAndSave)), describe({T::StartTrace}));
  EXPECT_EQ(controller.step(), 1);
  EXPECT_EQ(controller.previous(), A::Warmup);
  EXPECT_EQ(controller.current(), A::RecordAndSave);

  EXPECT_EQ(describe(controller.stop()), describe({T::StopTrace, T::TraceReady}));
  EXPECT_EQ(controller.previous(), A::RecordAndSave);
}

TEST(StepController, RenumberedStepCountsOnFromTheNewNumber) {
  StepController controller;
  controller.start(A::Record);
  controller.set_step(41);
  EXPECT_EQ(controller.step(), 41);
  EXPECT_EQ(controller.current(), A::Record);
  controller.advance(A::RecordAndSave);
  EXPECT_EQ(controller.step(), 42);
}

// Drives a controller the way the profiler does: start at step 0, step() `advances` times, stop.
// Returns each transition with the step number at which it happened.
std::vector<std::pair<int64_t, Transition>> simulate(const Schedule& schedule, int advances) {
  std::vector<std::pair<int64_t, Transition>> log;
  StepController controller;
  auto note = [&](const Transitions& transitions) {
    for (const Transition t : transitions) log.emplace_back(controller.step(), t);
  };
  note(controller.start(schedule.action_at(0)));
  for (int i = 0; i < advances; ++i) {
    note(controller.advance(schedule.action_at(controller.step() + 1)));
  }
  note(controller.stop());
  return log;
}

TEST(StepController, ThreeCyclesGiveThreeTracesAtCycleEnds) {
  ScheduleSpec spec;
  spec.wait = 1;
  spec.warmup = 1;
  spec.active = 2;
  spec.repeat = 3;
  const auto log = simulate(Schedule(spec), 17);  // 18 steps: 3 cycles of 4, then 6 idle steps

  std::vector<int64_t> ready_steps, prepare_steps, start_steps, stop_steps;
  for (const auto& [step, t] : log) {
    switch (t) {
      case T::PrepareTrace: prepare_steps.push_back(step); break;
      case T::StartTrace: start_steps.push_back(step); break;
      case T::StopTrace: stop_steps.push_back(step); break;
      case T::TraceReady: ready_steps.push_back(step); break;
      case T::WarnIncorrectSchedule: ADD_FAILURE() << "warning at step " << step; break;
    }
  }
  EXPECT_EQ(ready_steps, (std::vector<int64_t>{4, 8, 12}));
  EXPECT_EQ(stop_steps, (std::vector<int64_t>{4, 8, 12}));
  EXPECT_EQ(prepare_steps, (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(start_steps, (std::vector<int64_t>{2, 6, 10}));
}

TEST(StepController, StopDuringActiveCycleSavesPartialTrace) {
  ScheduleSpec spec;
  spec.wait = 1;
  spec.warmup = 1;
  spec.active = 3;
  const auto log = simulate(Schedule(spec), 3);  // stops in the 2nd active step
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[log.size() - 2], std::make_pair(int64_t{3}, T::StopTrace));
  EXPECT_EQ(log.back(), std::make_pair(int64_t{3}, T::TraceReady));
}

}  // namespace
}  // namespace perfprof
