// The sampler thread (telemetry/sampler.h) and how its counters travel: recorder, capture, trace
// model and Chrome trace.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "capture/capture_file.h"
#include "capture/live_capture.h"
#include "export/chrome_trace.h"
#include "json_checker.h"
#include "record/recorder.h"
#include "telemetry/sampler.h"
#include "test_util.h"
#include "trace/trace_builder.h"

namespace perfprof {
namespace {

using test::intern;
using test::Json;

// Reads `value` then `value + 1`... for metric `metric` of instance "fake"; fails on the calls
// listed in `failing` (1-based). Counts its calls in `calls`, which the test reads while the
// sampler's thread runs.
class CountingSource : public TelemetrySource {
 public:
  CountingSource(CounterMetric metric, std::atomic<int>& calls, std::vector<int> failing = {})
      : metric_(metric), calls_(calls), failing_(std::move(failing)) {}
  std::string name() const override { return "counting"; }
  std::string sample(int64_t, std::vector<Reading>& out) noexcept override {
    const int call = ++calls_;
    out.push_back({metric_, intern("fake"), static_cast<double>(call)});
    for (int failing : failing_) {
      if (failing == call) return "call " + std::to_string(call) + " failed";
    }
    return "";
  }

 private:
  CounterMetric metric_;
  std::atomic<int>& calls_;
  std::vector<int> failing_;
};

// Until the sampler's thread has sampled `count` times: however busy the machine, the test then
// knows how many rounds ran, where a sleep would only make them likely.
void wait_for_calls(const std::atomic<int>& calls, int count) {
  while (calls.load() < count) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::vector<std::unique_ptr<TelemetrySource>> sources(std::unique_ptr<TelemetrySource> source) {
  std::vector<std::unique_ptr<TelemetrySource>> list;
  list.push_back(std::move(source));
  return list;
}

// The counter events the recorder collected, with their metric.
std::vector<RawEvent> collected_counters() {
  std::vector<RawEvent> counters;
  for (const RawEvent& event : test::all_events(Recorder::instance().collect())) {
    if (event.kind == EventKind::Counter) counters.push_back(event);
  }
  return counters;
}

double value_of(const RawEvent& event) {
  double value = 0;
  std::memcpy(&value, &event.payload, sizeof(value));
  return value;
}

TEST(Sampler, RecordsEachReadingWithItsMetricAndTheSampleTime) {
  test::RecorderSession session(kChannelCounters);
  std::atomic<int> calls{0};
  Sampler sampler(sources(std::make_unique<CountingSource>(CounterMetric::GpuPower, calls)), 2'000'000);
  const int64_t before = now_ns();
  ASSERT_EQ(sampler.start(), "");
  wait_for_calls(calls, 3);
  const SamplerReport report = sampler.stop();
  const int64_t after = now_ns();

  const std::vector<RawEvent> counters = collected_counters();
  ASSERT_EQ(counters.size(), report.samples);
  EXPECT_EQ(report.readings, report.samples);
  EXPECT_GE(report.samples, 4u);  // at start, at least twice on the 2 ms grid, at stop
  for (size_t i = 0; i < counters.size(); ++i) {
    EXPECT_EQ(counter_metric(counters[i]), CounterMetric::GpuPower);
    EXPECT_EQ(counters[i].name, intern("fake"));
    EXPECT_EQ(value_of(counters[i]), static_cast<double>(i + 1));
    EXPECT_GE(counters[i].ts_ns, before);
    EXPECT_LE(counters[i].ts_ns, after);
    if (i > 0) {
      EXPECT_GT(counters[i].ts_ns, counters[i - 1].ts_ns);
    }
  }
  EXPECT_GT(report.wall_ns, 0);
  EXPECT_GE(report.cpu_ns, 0);
  EXPECT_TRUE(report.messages.empty());
}

TEST(Sampler, StopsWithoutWaitingForTheNextSlot) {
  test::RecorderSession session(kChannelCounters);
  std::atomic<int> calls{0};
  Sampler sampler(sources(std::make_unique<CountingSource>(CounterMetric::HostCpuUsage, calls)), 60'000'000'000);
  ASSERT_EQ(sampler.start(), "");
  wait_for_calls(calls, 1);  // the baseline is taken: the thread now waits for its next slot
  const auto stop_began = std::chrono::steady_clock::now();
  const SamplerReport report = sampler.stop();
  // Waiting for the slot would take the whole minute; half of it tells the two apart on any machine.
  EXPECT_LT(std::chrono::steady_clock::now() - stop_began, std::chrono::seconds(30));
  EXPECT_EQ(report.samples, 2u);  // the baseline and the last sample at stop
  EXPECT_EQ(collected_counters().size(), 2u);
}

TEST(Sampler, ReportsASourcesFirstFailureOnceAndKeepsSampling) {
  test::RecorderSession session(kChannelCounters);
  std::atomic<int> calls{0};
  Sampler sampler(sources(std::make_unique<CountingSource>(CounterMetric::DiskRead, calls, std::vector<int>{1, 2, 3})),
                  1'000'000);
  ASSERT_EQ(sampler.start(), "");
  wait_for_calls(calls, 4);  // past the three failing calls
  const SamplerReport report = sampler.stop();
  EXPECT_EQ(report.messages, std::vector<std::string>{"counting: call 1 failed"});
  EXPECT_GT(report.samples, 3u);
  EXPECT_EQ(collected_counters().size(), report.samples);  // a failing call's readings are kept
}

TEST(Sampler, StopWithoutStartIsEmpty) {
  std::atomic<int> calls{0};
  Sampler sampler(sources(std::make_unique<CountingSource>(CounterMetric::DiskRead, calls)), 1'000'000);
  const SamplerReport report = sampler.stop();
  EXPECT_EQ(report.samples, 0u);
  EXPECT_TRUE(report.messages.empty());
}

RawEvent sample_event(int64_t ts_ns, CounterMetric metric, std::string_view instance, double value) {
  RawEvent event = test::counter_event(ts_ns, instance, value);
  set_counter_metric(event, metric);
  return event;
}

// Two samples of two CPUs and a disk, on the sampler's thread, and a user's counter elsewhere.
TraceModel telemetry_model() {
  CollectedEvents collected;
  collected.threads.push_back(test::thread_events(
      0, 11, "perfprof sampler",
      {sample_event(2'000'000, CounterMetric::HostCpuUsage, "cpu0", 12.5),
       sample_event(2'000'000, CounterMetric::HostCpuUsage, "cpu1", 87.5),
       sample_event(2'000'000, CounterMetric::DiskWrite, "vda", 1048576),
       sample_event(3'000'000, CounterMetric::HostCpuUsage, "cpu0", 50),
       sample_event(3'000'000, CounterMetric::HostCpuUsage, "cpu1", 25)}));
  collected.threads.push_back(test::thread_events(1, 12, "main", {test::counter_event(2'500'000, "queue", 3)}));
  return build_trace(capture_of_this_process(std::move(collected), {}, {1'000'000, 4'000'000}));
}

TEST(TelemetryTrace, TheModelKeepsEachCountersMetric) {
  const TraceModel model = telemetry_model();
  std::map<std::string, CounterMetric> metric_of;
  for (size_t i = 0; i < model.counters.size(); ++i) metric_of[model.str(model.counters.name[i])] = model.counters.metric[i];
  EXPECT_EQ(metric_of, (std::map<std::string, CounterMetric>{{"cpu0", CounterMetric::HostCpuUsage},
                                                              {"cpu1", CounterMetric::HostCpuUsage},
                                                              {"vda", CounterMetric::DiskWrite},
                                                              {"queue", CounterMetric::User}}));
}

TEST(TelemetryTrace, ACaptureFileKeepsEachCountersMetric) {
  CollectedEvents collected;
  collected.threads.push_back(test::thread_events(
      0, 11, "perfprof sampler", {sample_event(2'000'000, CounterMetric::NvlinkReceive, "GPU 0 NVLink 2", 5e9)}));
  StringSink sink;
  ASSERT_TRUE(write_capture(capture_of_this_process(std::move(collected), {}, {1'000'000, 4'000'000}), sink));
  const TraceModel model = build_trace(read_capture(sink.bytes()).capture);
  ASSERT_EQ(model.counters.size(), 1u);
  EXPECT_EQ(model.counters.metric[0], CounterMetric::NvlinkReceive);
  EXPECT_EQ(model.str(model.counters.name[0]), "GPU 0 NVLink 2");
  EXPECT_EQ(model.counters.value[0], 5e9);
}

// A sampler's readings of one metric at one time are one Chrome counter event named by the metric,
// with a series per instance; a user's counter keeps its name and "value".
TEST(TelemetryTrace, ChromeCountersGroupInstancesOfAMetric) {
  test::TempDir dir;
  write_chrome_trace(AnalysedTrace(telemetry_model()), dir.file("t.json"), {});
  const Json doc = test::parse_json(test::read_file(dir.file("t.json")));
  std::vector<std::string> counters;
  for (const Json& event : doc.at("traceEvents").items) {
    if (event.string_at("ph") != "C") continue;
    std::string line = event.string_at("name") + " @" + event.at("ts").text + ":";
    const Json& args = event.at("args");
    for (size_t i = 0; i < args.keys.size(); ++i) line += " " + args.keys[i] + "=" + args.values[i].text;
    counters.push_back(line);
  }
  EXPECT_EQ(counters, (std::vector<std::string>{"CPU Usage (%) @2000.000: cpu0=12.5 cpu1=87.5",
                                                "Disk Write (bytes/s) @2000.000: vda=1048576",
                                                "CPU Usage (%) @3000.000: cpu0=50 cpu1=25",
                                                "queue @2500.000: value=3"}));
}

}  // namespace
}  // namespace perfprof
