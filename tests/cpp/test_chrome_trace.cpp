#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capture/live_capture.h"
#include "export/chrome_trace.h"
#include "export/output_file.h"
#include "json_checker.h"
#include "kernel_metrics_model.h"
#include "test_util.h"
#include "trace/trace_builder.h"

namespace perfprof {
namespace {

using test::begin_event;
using test::counter_event;
using test::end_event;
using test::instant_event;
using test::int_arg;
using test::text_arg;
using test::Json;
using test::TempDir;
using test::thread_events;

const std::string kReplacement = "\xEF\xBF\xBD";
const std::string kMainThreadName = "main \"thread\"\n\xFF";
const std::string kOuterName = "outer \"quoted\"\nline";
constexpr int64_t kMainTid = 1001;
constexpr int64_t kWorkerTid = 1002;

// One trace with every kind of slice the exporter writes, and names that need escaping.
TraceModel sample_model() {
  CollectedEvents collected;
  collected.threads.push_back(thread_events(
      0, kMainTid, kMainThreadName,
      {begin_event(1'000'000, 1, kOuterName, "cpu_op", int_arg(ArgKey::Stream, 1)),
       begin_event(1'500'000, 2, "inner\xFF"), end_event(2'000'000, 2), end_event(4'000'000, 1),
       begin_event(5'000'000, 3, "handoff", "user_annotation"),  // ends on the worker thread
       begin_event(7'000'000, 4, "A"), begin_event(7'100'000, 5, "B"), end_event(7'200'000, 4),
       end_event(7'300'000, 5),  // B cannot nest: async
       begin_event(8'000'000, 6, "still open", "user_annotation", text_arg(ArgKey::Domain, "d")),
       instant_event(8'100'000, "mark\ttab", "user_annotation"), counter_event(8'200'000, "mem", 42.5),
       counter_event(8'300'000, "mem", std::numeric_limits<double>::quiet_NaN()),
       begin_event(8'500'000, 9, "open without args")}));
  collected.threads.push_back(thread_events(1, kWorkerTid, "worker", {end_event(6'000'000, 3)}));
  return build_trace(capture_of_this_process(std::move(collected), {}, {500'000, 9'000'000}));
}

void write_trace(const TraceModel& model, const std::string& path, const ChromeTraceOptions& options) {
  write_chrome_trace(AnalysedTrace(model), path, options);
}

ChromeTraceOptions sample_options() {
  ChromeTraceOptions options;
  options.metadata = {{"perfprofTest", R"({"run": "abc", "n": [1, 2]})"}, {"plain \"key\"", "7"}};
  options.distributed_backend = "nccl";
  options.world_size = 8;
  return options;
}

// The exported events with phase `ph` and name `name`.
std::vector<const Json*> events_of(const Json& doc, const std::string& ph, const std::string& name) {
  std::vector<const Json*> found;
  for (const Json& event : doc.at("traceEvents").items) {
    if (event.string_at("ph") == ph && event.string_at("name") == name) found.push_back(&event);
  }
  return found;
}

// The single event with phase `ph` and name `name` (fails the test if there is not exactly one).
const Json& event_of(const Json& doc, const std::string& ph, const std::string& name) {
  static const Json kMissing;
  const auto found = events_of(doc, ph, name);
  EXPECT_EQ(found.size(), 1u) << "events with ph " << ph << " and name " << name;
  return found.size() == 1 ? *found[0] : kMissing;
}

std::string number_text(const Json& event, std::string_view key) {
  const Json* value = event.find(key);
  return value && value->is(Json::Type::Number) ? value->text : "<missing>";
}

std::string text_without_trace_name(const std::string& text) {
  return text.substr(0, text.find("\"traceName\""));
}

class ChromeTrace : public ::testing::Test {
 protected:
  // Writes the sample trace to `name` in the temporary directory and returns its text.
  std::string export_sample(const std::string& name) {
    const std::string path = dir_.file(name);
    write_trace(sample_model(), path, sample_options());
    return read_export(path);
  }
  static std::string read_export(const std::string& path) {
    return OutputFile::wants_gzip(path) ? test::read_gzip_file(path) : test::read_file(path);
  }
  Json export_and_parse(const std::string& name) {
    const std::string text = export_sample(name);
    try {
      return test::parse_json(text);
    } catch (const test::JsonError& error) {
      const size_t from = error.offset() > 40 ? error.offset() - 40 : 0;
      ADD_FAILURE() << error.what() << " near: " << text.substr(from, 80);
      return {};
    }
  }

  TempDir dir_;
};

TEST_F(ChromeTrace, TopLevelMembers) {
  const Json doc = export_and_parse("trace.json");
  ASSERT_TRUE(doc.is(Json::Type::Object));
  EXPECT_EQ(number_text(doc, "schemaVersion"), "1");
  EXPECT_EQ(doc.string_at("displayTimeUnit"), "ms");
  EXPECT_TRUE(doc.at("baseTimeNanoseconds").is(Json::Type::Number));
  EXPECT_TRUE(doc.at("deviceProperties").is(Json::Type::Array));
  EXPECT_EQ(doc.string_at("traceName"), dir_.file("trace.json"));

  const Json& info = doc.at("distributedInfo");
  EXPECT_EQ(info.string_at("backend"), "nccl");
  EXPECT_EQ(number_text(info, "rank"), "0");
  EXPECT_EQ(number_text(info, "world_size"), "8");

  // User metadata: top-level members with the given JSON values.
  EXPECT_EQ(doc.at("perfprofTest").string_at("run"), "abc");
  EXPECT_EQ(doc.at("perfprofTest").at("n").items.size(), 2u);
  EXPECT_EQ(number_text(doc, "plain \"key\""), "7");

  const Json& stats = doc.at("perfprofStats");
  EXPECT_EQ(number_text(stats, "async_ranges"), "2");
  EXPECT_EQ(number_text(stats, "unfinished_ranges"), "2");
  EXPECT_EQ(number_text(stats, "unmatched_range_ends"), "0");
  EXPECT_EQ(number_text(stats, "dropped_events"), "0");
}

TEST_F(ChromeTrace, RankIsFoundTheWayHolisticTraceAnalysisLooksForIt) {
  const std::string text = export_sample("trace.json");
  std::istringstream lines(text);
  std::string line;
  bool found = false;
  for (int n = 0; n < 10 && std::getline(lines, line); ++n) {
    if (line.rfind("  \"distributedInfo\": {", 0) != 0) continue;
    found = true;
    EXPECT_NE(line.find("\"rank\": 0"), std::string::npos) << line;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(line, match, std::regex(R"("rank":\s+(\d+))"))) << line;
    EXPECT_EQ(match[1], "0");
  }
  EXPECT_TRUE(found) << "no distributedInfo line near the top:\n" << text.substr(0, 400);
}

// Kinds recorded by their producers, named with torch.profiler's categories.
TEST_F(ChromeTrace, EachKindIsWrittenWithTorchsCategory) {
  const std::pair<RangeKind, const char*> kinds[] = {
      {RangeKind::CpuOp, "cpu_op"},         {RangeKind::UserAnnotation, "user_annotation"},
      {RangeKind::Step, "user_annotation"}, {RangeKind::Mstx, "user_annotation"},
      {RangeKind::PythonFunction, "python_function"}, {RangeKind::Module, "python_function"},
      {RangeKind::Gc, "gc"},                {RangeKind::Other, ""}};
  std::vector<RawEvent> events;
  for (size_t k = 0; k < std::size(kinds); ++k) {
    RawEvent begin = begin_event(100 * k, k + 1, "kind " + std::to_string(k));
    begin.range_kind = kinds[k].first;
    events.push_back(begin);
    events.push_back(end_event(100 * k + 50, k + 1));
  }
  CollectedEvents collected;
  collected.threads.push_back(thread_events(0, kMainTid, "main", std::move(events)));
  const TraceModel model = build_trace(capture_of_this_process(std::move(collected), {}, {0, 10'000}));
  const std::string path = dir_.file("kinds.json");
  write_trace(model, path, ChromeTraceOptions{});
  const Json doc = test::parse_json(read_export(path));
  for (size_t k = 0; k < std::size(kinds); ++k) {
    EXPECT_EQ(event_of(doc, "X", "kind " + std::to_string(k)).string_at("cat"), kinds[k].second) << k;
    EXPECT_EQ(model.ranges.kind[k], kinds[k].first) << k;  // one thread, begin order: row k
  }
}

// Every type of argument value, named and written as torch.profiler writes them.
TEST_F(ChromeTrace, TypedArgumentsAreWrittenAsTorchNamesThem) {
  ArgSet args = test::input_dims_arg("[[[2, 3], [4]], [8, 64], [-1], []]");
  args.args.push_back({ArgKey::InputTypes, std::vector<StringId>{test::intern("TensorList"), test::intern("float"),
                                                                 test::intern("Scalar \"q\""), kEmptyString}});
  args.args.push_back({ArgKey::ConcreteInputs, std::vector<StringId>{kEmptyString, kEmptyString,
                                                                     test::intern("[2, 2]"), test::intern("1")}});
  args.args.push_back({ArgKey::Annotation, test::intern("line\nbreak")});
  args.args.push_back({ArgKey::Flops, int64_t{-5}});
  CollectedEvents collected;
  collected.threads.push_back(thread_events(0, kMainTid, "main", {begin_event(100, 1, "aten::cat", "cpu_op", args),
                                                                  end_event(200, 1)}));
  const std::string path = dir_.file("args.json");
  write_trace(build_trace(capture_of_this_process(std::move(collected), {}, {0, 1'000})), path, ChromeTraceOptions{});
  const std::string text = read_export(path);
  EXPECT_NE(text.find(R"("args":{"Input Dims":[[[2,3],[4]],[8,64],[-1],[]],"Input type":["TensorList","float",)"
                      R"("Scalar \"q\"",""],"Concrete Inputs":["","","[2, 2]","1"],"args":"line\nbreak","flops":-5})"),
            std::string::npos)
      << text;
  const Json doc = test::parse_json(text);
  EXPECT_EQ(event_of(doc, "X", "aten::cat").at("args").keys,
            (std::vector<std::string>{"Input Dims", "Input type", "Concrete Inputs", "args", "flops"}));
}

// _RecordFunctionFast's keyword inputs are members of their own, typed as torch.profiler writes
// them; a number whose text is not one (a damaged capture) is written as its text.
TEST_F(ChromeTrace, KeywordInputsAreMembersOfTheirOwn) {
  ArgSet args;
  std::vector<StringId> pairs;
  for (const char* text : {"grid", "sgrid(4,)", "stream", "i7", "kernel_num_gb", "f0.25", "flag", "btrue",
                           "odd", "i12x", "no value"}) {
    pairs.push_back(test::intern(text));
  }
  args.args.push_back({ArgKey::KeywordInputs, std::move(pairs)});
  CollectedEvents collected;
  collected.threads.push_back(thread_events(0, kMainTid, "main", {begin_event(100, 1, "triton_", "cpu_op", args),
                                                                  end_event(200, 1)}));
  const std::string path = dir_.file("keywords.json");
  write_trace(build_trace(capture_of_this_process(std::move(collected), {}, {0, 1'000})), path, ChromeTraceOptions{});
  const std::string text = read_export(path);
  EXPECT_NE(text.find(R"json("args":{"grid":"grid(4,)","stream":7,"kernel_num_gb":0.25,"flag":true,"odd":"12x"})json"),
            std::string::npos)
      << text;
}

// Kineto's window markers, at the end of the events: the span over the window, its start and end.
TEST_F(ChromeTrace, TheWindowIsMarkedAsKinetoMarksIt) {
  const Json doc = export_and_parse("trace.json");
  const Json& span = event_of(doc, "X", "PyTorch Profiler (0)");
  EXPECT_EQ(span.string_at("cat"), "Trace");
  EXPECT_EQ(span.string_at("pid"), "Spans");
  EXPECT_EQ(span.string_at("tid"), "PyTorch Profiler");
  EXPECT_EQ(number_text(span, "ts"), "500.000");  // sample_model's window: 0.5 ms to 9 ms
  EXPECT_EQ(number_text(span, "dur"), "8500.000");
  EXPECT_EQ(number_text(span.at("args"), "Op count"), "0");
  const Json& start = event_of(doc, "i", "Iteration Start: PyTorch Profiler");
  EXPECT_EQ(start.string_at("s"), "g");
  EXPECT_EQ(start.string_at("pid"), "Traces");
  EXPECT_EQ(start.string_at("tid"), "Trace PyTorch Profiler");
  EXPECT_EQ(number_text(start, "ts"), "500.000");
  const Json& end = event_of(doc, "i", "Record Window End");
  EXPECT_EQ(end.string_at("s"), "g");
  EXPECT_EQ(end.string_at("pid"), "");
  EXPECT_EQ(number_text(end, "ts"), "9000.000");
  EXPECT_EQ(doc.at("traceEvents").items.back().string_at("name"), "Record Window End");
}

TEST_F(ChromeTrace, NestedRangesAreCompleteEventsWithDuration) {
  const Json doc = export_and_parse("trace.json");
  const Json& outer = event_of(doc, "X", kOuterName);  // quotes and newline round-trip
  EXPECT_EQ(number_text(outer, "ts"), "1000.000");
  EXPECT_EQ(number_text(outer, "dur"), "3000.000");
  EXPECT_EQ(outer.string_at("cat"), "cpu_op");
  EXPECT_EQ(number_text(outer, "pid"), std::to_string(getpid()));
  EXPECT_EQ(number_text(outer, "tid"), std::to_string(kMainTid));
  EXPECT_EQ(number_text(outer.at("args"), "stream"), "1");

  const Json& inner = event_of(doc, "X", "inner" + kReplacement);  // invalid UTF-8 replaced
  EXPECT_EQ(number_text(inner, "ts"), "1500.000");
  EXPECT_EQ(number_text(inner, "dur"), "500.000");
  EXPECT_EQ(inner.find("args"), nullptr);
  event_of(doc, "X", "A");
}

TEST_F(ChromeTrace, AsyncRangesArePairedBeginEndEventsWithOneId) {
  const Json doc = export_and_parse("trace.json");
  for (const std::string name : {"handoff", "B"}) {
    EXPECT_TRUE(events_of(doc, "X", name).empty()) << name;
    const Json& begin = event_of(doc, "b", name);
    const Json& end = event_of(doc, "e", name);
    EXPECT_FALSE(begin.string_at("id").empty()) << name;
    EXPECT_EQ(begin.string_at("id"), end.string_at("id")) << name;
    EXPECT_EQ(begin.string_at("cat"), end.string_at("cat")) << name;
  }
  EXPECT_NE(event_of(doc, "b", "handoff").string_at("id"), event_of(doc, "b", "B").string_at("id"));
  // The cross-thread range begins on the main thread and ends on the worker.
  EXPECT_EQ(number_text(event_of(doc, "b", "handoff"), "tid"), std::to_string(kMainTid));
  EXPECT_EQ(number_text(event_of(doc, "e", "handoff"), "tid"), std::to_string(kWorkerTid));
  EXPECT_EQ(number_text(event_of(doc, "e", "handoff"), "ts"), "6000.000");
}

TEST_F(ChromeTrace, UnfinishedRangesAreMarkedInArgs) {
  const Json doc = export_and_parse("trace.json");
  const Json& open = event_of(doc, "X", "still open");
  EXPECT_EQ(number_text(open, "dur"), "1000.000");  // to the window end
  ASSERT_NE(open.find("args"), nullptr);
  EXPECT_EQ(open.at("args").string_at("domain"), "d");
  EXPECT_TRUE(open.at("args").at("unfinished").boolean);

  const Json& bare = event_of(doc, "X", "open without args");
  ASSERT_NE(bare.find("args"), nullptr);
  EXPECT_EQ(bare.at("args").keys, std::vector<std::string>{"unfinished"});
  EXPECT_TRUE(bare.at("args").at("unfinished").boolean);
  EXPECT_EQ(event_of(doc, "X", kOuterName).at("args").find("unfinished"), nullptr);
}

TEST_F(ChromeTrace, ThreadAndProcessMetadata) {
  const Json doc = export_and_parse("trace.json");
  std::map<std::string, std::string> thread_names;  // tid -> name
  std::map<std::string, std::string> sort_indexes;
  for (const Json* event : events_of(doc, "M", "thread_name")) {
    thread_names[number_text(*event, "tid")] = event->at("args").string_at("name");
  }
  for (const Json* event : events_of(doc, "M", "thread_sort_index")) {
    sort_indexes[number_text(*event, "tid")] = number_text(event->at("args"), "sort_index");
  }
  const std::map<std::string, std::string> expected_names = {
      {std::to_string(kMainTid), "main \"thread\"\n" + kReplacement},
      {std::to_string(kWorkerTid), "worker"}};
  EXPECT_EQ(thread_names, expected_names);
  EXPECT_EQ(sort_indexes, (std::map<std::string, std::string>{{std::to_string(kMainTid), "0"},
                                                               {std::to_string(kWorkerTid), "1"}}));
  const Json& process = event_of(doc, "M", "process_name");
  EXPECT_FALSE(process.at("args").string_at("name").empty());
  EXPECT_EQ(number_text(process, "pid"), std::to_string(getpid()));
}

TEST_F(ChromeTrace, InstantsAndCounters) {
  const Json doc = export_and_parse("trace.json");
  const Json& mark = event_of(doc, "i", "mark\ttab");
  EXPECT_EQ(mark.string_at("s"), "t");
  EXPECT_EQ(mark.string_at("cat"), "user_annotation");
  EXPECT_EQ(number_text(mark, "ts"), "8100.000");

  const auto counters = events_of(doc, "C", "mem");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0]->at("args").at("value").number, 42.5);
  EXPECT_TRUE(counters[1]->at("args").at("value").is(Json::Type::Null));  // NaN
}

// Every complete ("X") event of a thread must nest inside the one before it or follow it:
// viewers draw thread slices as a stack.
TEST_F(ChromeTrace, CompleteEventsNestPerThread) {
  const Json doc = export_and_parse("trace.json");
  std::map<std::string, std::vector<std::pair<double, double>>> slices;  // tid -> (begin, end)
  for (const Json& event : doc.at("traceEvents").items) {
    if (event.string_at("ph") != "X") continue;
    const double ts = event.at("ts").number;
    slices[number_text(event, "tid")].emplace_back(ts, ts + event.at("dur").number);
  }
  for (auto& [tid, intervals] : slices) {
    std::sort(intervals.begin(), intervals.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open_ends;
    for (const auto& [begin, end] : intervals) {
      while (!open_ends.empty() && open_ends.back() <= begin) open_ends.pop_back();
      EXPECT_TRUE(open_ends.empty() || end <= open_ends.back())
          << "slice [" << begin << ", " << end << "] on thread " << tid << " overlaps its parent";
      open_ends.push_back(end);
    }
  }
}

// As torch.profiler writes them: {"ph": "s", "id": 1, "pid", "tid", "ts", "cat": "fwdbwd",
// "name": "fwdbwd"} at the forward operator, the same with "bp": "e" at the backward one.
TEST_F(ChromeTrace, ForwardBackwardLinksAreFlowEventsAsTorchWritesThem) {
  CollectedEvents collected;
  CompletedRange forward{kMainTid, 1'000, 2'000, test::intern("aten::mul"), kNoArgs, 5};
  forward.kind = RangeKind::CpuOp;
  CompletedRange backward = forward;
  backward.os_tid = kWorkerTid;
  backward.begin_ns = 3'000;
  backward.end_ns = 4'000;
  backward.name = test::intern("MulBackward0");
  backward.forward_os_tid = kMainTid;
  collected.completed = {forward, backward};
  const std::string path = dir_.file("flows.json");
  write_trace(build_trace(capture_of_this_process(std::move(collected), {}, {0, 10'000})), path, ChromeTraceOptions{});
  const Json doc = test::parse_json(read_export(path));

  const Json& start = event_of(doc, "s", "fwdbwd");
  const Json& finish = event_of(doc, "f", "fwdbwd");
  const auto key_set = [](const Json& event) { return std::set<std::string>(event.keys.begin(), event.keys.end()); };
  EXPECT_EQ(key_set(start), (std::set<std::string>{"ph", "id", "pid", "tid", "ts", "cat", "name"}));
  EXPECT_EQ(key_set(finish), (std::set<std::string>{"ph", "id", "pid", "tid", "ts", "cat", "name", "bp"}));
  EXPECT_EQ(start.string_at("cat"), "fwdbwd");
  EXPECT_EQ(number_text(start, "id"), "1");
  EXPECT_EQ(number_text(finish, "id"), "1");
  EXPECT_EQ(finish.string_at("bp"), "e");
  EXPECT_EQ(number_text(start, "ts"), "1.000");
  EXPECT_EQ(number_text(start, "tid"), std::to_string(kMainTid));
  EXPECT_EQ(number_text(finish, "ts"), "3.000");
  EXPECT_EQ(number_text(finish, "tid"), std::to_string(kWorkerTid));
}

// As torch.profiler links its python_function slices: ids from 1, each frame naming its caller,
// null at the bottom of a stack. Operators carry no stack of their own.
TEST_F(ChromeTrace, PythonFramesCarryTheirIdAndTheirCallersId) {
  CollectedEvents collected;
  collected.threads.push_back(thread_events(
      0, kMainTid, "main",
      {begin_event(100, 1, "<module>", "python_function"), begin_event(200, 2, "f", "python_function"),
       begin_event(300, 3, "aten::add", "cpu_op", int_arg(ArgKey::Stream, 1)), begin_event(350, 4, "g inside the op", "python_function"),
       end_event(360, 4), end_event(400, 3), end_event(800, 2), end_event(1000, 1),
       begin_event(1100, 5, "second", "python_function"), end_event(1200, 5)}));
  const std::string path = dir_.file("python.json");
  write_trace(build_trace(capture_of_this_process(std::move(collected), {}, {0, 10'000})), path, ChromeTraceOptions{});
  const Json doc = test::parse_json(read_export(path));

  std::map<std::string, std::pair<std::string, std::string>> ids;  // name -> (id, parent id)
  for (const Json& event : doc.at("traceEvents").items) {
    if (event.string_at("cat") != "python_function") continue;
    const Json& args = event.at("args");
    ids[event.string_at("name")] = {number_text(args, "Python id"),
                                    args.at("Python parent id").is(Json::Type::Null) ? "null" : number_text(args, "Python parent id")};
  }
  using Ids = std::pair<std::string, std::string>;
  EXPECT_EQ(ids, (std::map<std::string, Ids>{{"<module>", {"1", "null"}}, {"f", {"2", "1"}},
                                             {"g inside the op", {"3", "2"}}, {"second", {"4", "null"}}}));
  EXPECT_EQ(event_of(doc, "X", "aten::add").at("args").keys, std::vector<std::string>{"stream"});
}

TEST_F(ChromeTrace, MeasuredKernelsCarryTheirMetricValuesAsArgs) {
  namespace metrics = test::kernel_metrics_model;
  const std::string path = dir_.file("metrics.json");
  write_trace(test::measured_kernels(), path, ChromeTraceOptions{});
  const Json doc = test::parse_json(test::read_file(path));
  const std::vector<std::string> kernel_args = {"device", "context", "stream", "correlation", "registers per thread",
                                                "shared memory", "grid", "block"};
  // After the kernel's own args, one per metric evaluated for it: DRAM Read (NaN) has none.
  std::vector<std::string> measured_args = kernel_args;
  measured_args.insert(measured_args.end(), {metrics::kSmThroughput, metrics::kDramWrite});
  const Json& gemm = event_of(doc, "X", "gemm").at("args");
  EXPECT_EQ(gemm.keys, measured_args);
  EXPECT_EQ(number_text(gemm, metrics::kSmThroughput), "87.5");
  EXPECT_EQ(number_text(gemm, metrics::kDramWrite), "12345678901");
  // Work that was not measured keeps the args it had.
  EXPECT_EQ(event_of(doc, "X", "relu").at("args").keys, kernel_args);
  const std::vector<std::string> copy_args = {"device", "context", "stream", "correlation", "bytes",
                                              "memory bandwidth (GB/s)"};
  EXPECT_EQ(event_of(doc, "X", "Memcpy DtoH").at("args").keys, copy_args);
}

TEST_F(ChromeTrace, GzipOutputHoldsTheSameTrace) {
  const TraceModel model = sample_model();
  const std::string plain_path = dir_.file("trace.json");
  const std::string gzip_path = dir_.file("trace.json.gz");
  write_trace(model, plain_path, sample_options());
  write_trace(model, gzip_path, sample_options());

  const std::string raw = test::read_file(gzip_path);
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1F);
  EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x8B);
  const std::string unzipped = test::read_gzip_file(gzip_path);
  Json doc;
  ASSERT_NO_THROW(doc = test::parse_json(unzipped));
  EXPECT_EQ(doc.string_at("traceName"), gzip_path);
  // Same text apart from the trace name.
  EXPECT_EQ(text_without_trace_name(unzipped), text_without_trace_name(test::read_file(plain_path)));
}

TEST_F(ChromeTrace, LargeTraceIsValidAcrossFlushes) {
  constexpr int kRanges = 40'000;  // several MB: the writer flushes every MB
  std::vector<RawEvent> events;
  for (int i = 0; i < kRanges; ++i) {
    const uint64_t id = static_cast<uint64_t>(i) + 1;
    events.push_back(begin_event(1000 * i, id, "op \"" + std::to_string(i % 50) + "\"", "cpu_op",
                                 int_arg(ArgKey::Stream, i)));
    events.push_back(end_event(1000 * i + 500, id));
  }
  CollectedEvents collected;
  collected.threads.push_back(thread_events(0, kMainTid, "main", std::move(events)));
  const TraceModel model = build_trace(capture_of_this_process(std::move(collected), {}, {0, 1000 * kRanges}));

  for (const std::string name : {"large.json", "large.json.gz"}) {
    const std::string path = dir_.file(name);
    write_trace(model, path, ChromeTraceOptions{});
    const std::string text = read_export(path);
    EXPECT_GT(text.size(), 3u << 20) << name;
    Json doc;
    ASSERT_NO_THROW(doc = test::parse_json(text)) << name;
    size_t complete = 0;
    // The ranges' complete events; Kineto's window span ("cat": "Trace") is not one of them.
    for (const Json& event : doc.at("traceEvents").items) {
      complete += event.string_at("ph") == "X" && event.string_at("cat") != "Trace";
    }
    EXPECT_EQ(complete, static_cast<size_t>(kRanges)) << name;
    EXPECT_EQ(doc.at("distributedInfo").string_at("backend"), "");
  }
}

TEST_F(ChromeTrace, UnwritablePathThrowsAndLeavesNoFile) {
  const std::string missing_dir = dir_.file("missing/trace.json");
  test::write_file(dir_.file("plain-file"), "not a directory");
  const std::string under_file = dir_.file("plain-file/trace.json.gz");
  for (const std::string& path : {missing_dir, under_file}) {
    try {
      write_trace(sample_model(), path, sample_options());
      ADD_FAILURE() << "no error for " << path;
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(dir_.entries(), std::vector<std::string>{"plain-file"});
  EXPECT_EQ(test::read_file(dir_.file("plain-file")), "not a directory");
}

TEST_F(ChromeTrace, FailedExportLeavesAnExistingTargetUntouched) {
  // The target is a directory, so the final rename fails after everything was written.
  const std::string path = dir_.file("trace.json");
  std::filesystem::create_directory(path);
  EXPECT_THROW(write_trace(sample_model(), path, sample_options()), std::runtime_error);
  EXPECT_EQ(dir_.entries(), std::vector<std::string>{"trace.json"});
  EXPECT_TRUE(std::filesystem::is_directory(path));
}

}  // namespace
}  // namespace perfprof
