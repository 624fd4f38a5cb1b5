#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "analysis/op_tree.h"
#include "capture/byte_codec.h"
#include "capture/capture_file.h"
#include "capture/capture_format.h"
#include "capture/capture_stream.h"
#include "capture/checksum.h"
#include "capture/live_capture.h"
#include "capture/sink.h"
#include "common/clock.h"
#include "export/chrome_trace.h"
#include "json_checker.h"
#include "test_util.h"
#include "trace/trace_builder.h"

namespace perfprof {
namespace {

using test::begin_event;
using test::counter_event;
using test::end_event;
using test::input_dims_arg;
using test::instant_event;
using test::int_arg;
using test::Json;
using test::text_arg;
using test::intern;
using test::TempDir;
using test::thread_events;

constexpr int64_t kMainTid = 2001;
constexpr int64_t kWorkerTid = 2002;
constexpr int64_t kAutogradTid = 2003;  // named only by the ranges torch recorded on it

GpuActivity kernel() {
  GpuActivity a;
  a.kind = GpuActivityKind::Kernel;
  a.start_ns = 2'100'000;
  a.end_ns = 2'600'000;
  a.device = 1;
  a.context = 2;
  a.stream = 7;
  a.correlation = 41;
  a.name = intern("capture_test_kernel");
  a.grid[0] = 3, a.grid[1] = 4, a.grid[2] = 5;
  a.block[0] = 32, a.block[1] = 2, a.block[2] = 1;
  a.registers_per_thread = 40;
  a.static_shared_memory = 1024;
  a.dynamic_shared_memory = 2048;
  a.bytes = 77;
  a.address = 0xabc;
  a.copy_kind = 2;
  a.value = 9;
  a.graph_id = 12;
  return a;
}

// A session with something of every kind a capture holds.
Capture sample_capture() {
  CollectedEvents host;
  host.threads.push_back(thread_events(
      0, kMainTid, "main",
      {begin_event(1'000'000, 1, "ProfilerStep#1", "user_annotation"),
       begin_event(1'100'000, 2, "aten::mm", "cpu_op", input_dims_arg("[[2, 3], [3, 4]]")),
       end_event(3'000'000, 2), begin_event(3'500'000, 3, "handoff", "user_annotation"),
       instant_event(3'600'000, "mark", "mstx", text_arg(ArgKey::Domain, "capture")),
       counter_event(3'700'000, "queue", 2.5), end_event(8'000'000, 1)}));
  host.threads.push_back(thread_events(1, kWorkerTid, "worker", {end_event(4'000'000, 3)}));
  CompletedRange imported;
  imported.os_tid = kAutogradTid;
  imported.begin_ns = 5'000'000;
  imported.end_ns = 5'500'000;
  imported.name = intern("MmBackward0");
  imported.kind = RangeKind::CpuOp;
  imported.sequence = 12;
  imported.forward_os_tid = kMainTid;
  imported.imported = true;
  host.completed.push_back(imported);
  memory::MemoryEvents& mem = host.memory;
  mem.storages.push_back({5, 0x1000, {memory::DeviceType::kCpu, -1}, 64});
  mem.allocations.push_back({1'200'000, 0x1000, 64, 64, 128, {memory::DeviceType::kCpu, -1}, 0, kMainTid, intern("aten::mm")});
  mem.allocations.push_back({2'900'000, 0x1000, -64, 0, 128, {memory::DeviceType::kCpu, -1}, 0, kMainTid, kEmptyString});
  mem.nodes.push_back({1'100'000, false, {{0, memory::Write::kYes}}, {0, 1}});
  mem.known_roles.push_back({0, memory::Category::kParameter});
  host.observed_tensors.push_back({0x2000, {memory::DeviceType::kCuda, 1}, 1'300'000, 256, memory::Category::kGradient});
  host.dropped_events = 3;
  host.import_losses = {4, 5};

  GpuInput gpu;
  gpu.collected_any = true;
  gpu.collected.activities.push_back(kernel());
  gpu.collected.api_calls.push_back({false, 211, intern("cudaLaunchKernel"), 2'000'000, 2'050'000, kMainTid, 41});
  gpu.collected.external_ids.emplace(41, 2);
  GpuDevice device;
  device.id = 1;
  device.name = "Test GPU";
  device.sm_count = 132;
  device.global_memory_bytes = uint64_t{80} << 30;
  device.compute_major = 9;
  gpu.collected.devices.push_back(device);
  gpu.collected.dropped_records = 6;
  gpu.stream_annotations.push_back({3, 7});
  gpu.kernel_metrics.columns = {"DRAM Read (bytes)", "L2 Hit Rate (%)"};
  gpu.kernel_metrics.kernels.push_back({41, 2'100'000, {4096, std::nan("")}});
  gpu.kernel_metrics.kernels_left_out = 2;
  gpu.kernel_metrics.kernels_unmatched = 1;

  Capture capture = capture_of_this_process(std::move(host), std::move(gpu), {900'000, 9'000'000});
  capture.other_threads.push_back({kAutogradTid, "pt_autograd_0"});
  capture.metadata = {{"config", R"({"with_flops": true})", false}, {"phase", R"("steady \"x\"")", true}};
  return capture;
}

std::string bytes_of(const Capture& capture) {
  StringSink sink;
  EXPECT_TRUE(write_capture(capture, sink));
  return sink.bytes();
}

// The Chrome trace built from `capture`, written to `path` (the trace names its own path).
std::string chrome_trace_of(Capture capture, const std::string& path) {
  write_chrome_trace(AnalysedTrace(build_trace(std::move(capture))), path, ChromeTraceOptions{});
  return test::read_file(path);
}

TEST(Capture, WhatIsReadBackIsWhatWasWritten) {
  const std::string bytes = bytes_of(sample_capture());
  const CaptureReading reading = read_capture(bytes);
  EXPECT_TRUE(reading.complete);
  EXPECT_EQ(reading.problem, "");
  EXPECT_EQ(bytes_of(reading.capture), bytes);

  const Capture& read = reading.capture;
  const CollectedEvents host = loaded_host(read);
  ASSERT_EQ(host.threads.size(), 2u);
  EXPECT_EQ(host.threads[0].name, "main");
  EXPECT_EQ(host.threads[0].events.size(), 7u);
  EXPECT_EQ(read.arg_sets.at(index_of(host.threads[0].events[1].args)), input_dims_arg("[[2, 3], [3, 4]]"));
  const ArgSet& mark_args = read.arg_sets.at(index_of(host.threads[0].events[4].args));
  ASSERT_NE(mark_args.find<StringId>(ArgKey::Domain), nullptr);
  EXPECT_EQ(read.strings.at(*mark_args.find<StringId>(ArgKey::Domain)), "capture");
  ASSERT_EQ(read.metadata.size(), 2u);
  EXPECT_EQ(read.metadata[0].key, "config");
  EXPECT_FALSE(read.metadata[0].from_user);
  EXPECT_EQ(read.metadata[1].json, R"("steady \"x\"")");
  EXPECT_TRUE(read.metadata[1].from_user);
  EXPECT_EQ(read.host.completed.at(0).forward_os_tid, kMainTid);
  EXPECT_TRUE(read.host.completed.at(0).imported);
  EXPECT_EQ(read.host.memory.nodes.at(0).allocations, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(read.host.observed_tensors.at(0).device.index, 1);
  EXPECT_EQ(read.host.dropped_events, 3u);
  EXPECT_EQ(read.host.import_losses.failed_reads, 5u);
  const GpuActivity& activity = read.gpu.collected.activities.at(0);
  EXPECT_EQ(activity.grid[2], 5u);
  EXPECT_EQ(activity.block[1], 2u);
  EXPECT_EQ(activity.static_shared_memory, 1024);
  EXPECT_EQ(activity.graph_id, 12u);
  EXPECT_EQ(read.strings[activity.name], "capture_test_kernel");
  EXPECT_EQ(read.gpu.collected.external_ids.at(41), 2u);
  EXPECT_EQ(read.gpu.collected.devices.at(0).name, "Test GPU");
  EXPECT_EQ(read.gpu.collected.dropped_records, 6u);
  EXPECT_EQ(read.gpu.stream_annotations.at(0).stream, 7u);
  const KernelMetricsInput& metrics = read.gpu.kernel_metrics;
  EXPECT_EQ(metrics.columns, (std::vector<std::string>{"DRAM Read (bytes)", "L2 Hit Rate (%)"}));
  ASSERT_EQ(metrics.kernels.size(), 1u);
  EXPECT_EQ(metrics.kernels[0].correlation, 41u);
  EXPECT_EQ(metrics.kernels[0].start_ns, 2'100'000);
  EXPECT_EQ(metrics.kernels[0].values[0], 4096);
  EXPECT_TRUE(std::isnan(metrics.kernels[0].values[1]));
  EXPECT_EQ(metrics.kernels_left_out, 2u);
  EXPECT_EQ(metrics.kernels_unmatched, 1u);
  EXPECT_EQ(read.window.begin_ns, 900'000);
  EXPECT_EQ(read.other_threads.back().name, "pt_autograd_0");
}

TEST(Capture, KernelMetricsReachTheirKernelAndWhatCannotIsCounted) {
  Capture capture = sample_capture();
  capture.gpu.kernel_metrics.kernels.push_back({99, 2'100'000, {1, 2}});  // no such kernel record
  const TraceModel model = build_trace(read_capture(bytes_of(capture)).capture);
  const KernelMetricsTable& table = model.gpu.kernel_metrics;
  ASSERT_EQ(table.columns.size(), 2u);
  EXPECT_EQ(model.str(table.columns[0]), "DRAM Read (bytes)");
  ASSERT_EQ(model.gpu.activities.at(0).correlation, 41u);
  const double* values = table.of(0);
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(values[0], 4096);
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_EQ(model.stats.kernel_metrics_left_out, 2u);
  EXPECT_EQ(model.stats.kernel_metrics_unmatched, 1u + 1u);  // the capture's count and the orphan row
}

TEST(Capture, KernelMetricValuesThatDoNotMatchTheirColumnsAreRefused) {
  Capture capture = sample_capture();
  capture.gpu.kernel_metrics.kernels[0].values.pop_back();
  const CaptureReading reading = read_capture(bytes_of(capture));
  EXPECT_FALSE(reading.complete);
  EXPECT_NE(reading.problem.find("metric values do not match"), std::string::npos) << reading.problem;
  EXPECT_TRUE(reading.capture.gpu.kernel_metrics.kernels.empty());
}

TEST(Capture, HoldsOnlyTheStringsItsEventsUse) {
  intern("capture test: a string no event uses");
  const Capture capture = sample_capture();
  for (const std::string& text : capture.strings) EXPECT_NE(text, "capture test: a string no event uses");
  EXPECT_EQ(capture.strings[capture.host.completed.at(0).name], "MmBackward0");
}

TEST(Capture, HoldsOnlyTheArgumentSetsItsEventsUseAndTheirStrings) {
  const ArgSetId unused = global_arg_sets().intern(text_arg(ArgKey::Annotation, "capture test: args no event uses"));
  const Capture capture = sample_capture();
  ASSERT_GT(capture.arg_sets.size(), 1u);
  if (index_of(unused) < capture.arg_sets.size()) {
    EXPECT_TRUE(capture.arg_sets[index_of(unused)].empty());
  }
  for (const std::string& text : capture.strings) EXPECT_NE(text, "capture test: args no event uses");
  // The mark's domain is a string only its args use: the capture holds it.
  EXPECT_NE(std::find(capture.strings.begin(), capture.strings.end(), "capture"), capture.strings.end());
}

// The bytes of a capture holding one event whose args are `args`.
std::string capture_with_args(const ArgSet& args) {
  Capture capture;
  capture.strings = {"", "op"};
  capture.arg_sets = {ArgSet{}, args};
  RawEvent begin{10, 1, 1, ArgSetId{1}, EventKind::RangeBegin, RangeKind::CpuOp, {}};
  RawEvent end{20, 1, kEmptyString, kNoArgs, EventKind::RangeEnd, RangeKind::Other, {}};
  capture.host.threads.push_back(thread_events(0, kMainTid, "main", {begin, end}));
  capture.window = {0, 100};
  return bytes_of(capture);
}

TEST(Capture, ArgumentsOfKeysANewerPerfprofAddedAreReadAndLeftOutOfExports) {
  ArgSet args;
  args.args.push_back({ArgKey::Stream, int64_t{3}});
  args.args.push_back({static_cast<ArgKey>(200), int64_t{7}});  // a key this perfprof does not know
  const CaptureReading reading = read_capture(capture_with_args(args));
  ASSERT_TRUE(reading.complete) << reading.problem;
  EXPECT_EQ(reading.capture.arg_sets.at(1), args);
  const TempDir dir;
  const Json doc = test::parse_json(chrome_trace_of(reading.capture, dir.file("trace.json")));
  int ops = 0;
  for (const Json& event : doc.at("traceEvents").items) {
    if (event.string_at("name") != "op") continue;
    ++ops;
    EXPECT_EQ(event.at("args").keys, std::vector<std::string>{"stream"});
  }
  EXPECT_EQ(ops, 1);
}

TEST(Capture, BuildingOfflineGivesTheSameTraceAsBuildingInProcess) {
  const TempDir dir;
  const Capture capture = sample_capture();
  Capture copy = read_capture(bytes_of(capture)).capture;
  const std::string in_process = chrome_trace_of(capture, dir.file("trace.json"));
  const std::string offline = chrome_trace_of(std::move(copy), dir.file("trace.json"));
  EXPECT_EQ(offline, in_process);
  EXPECT_NE(in_process.find("pt_autograd_0"), std::string::npos);  // the name taken when recording
  EXPECT_NE(in_process.find("capture_test_kernel"), std::string::npos);
}

// The offsets where each chunk of `bytes` begins.
std::vector<size_t> chunk_offsets(const std::string& bytes) {
  std::vector<size_t> offsets;
  for (size_t offset = capture_format::kFileHeaderBytes; offset < bytes.size();) {
    offsets.push_back(offset);
    uint64_t size = 0;
    std::memcpy(&size, bytes.data() + offset + 8, sizeof(size));
    offset += capture_format::kChunkHeaderBytes + size;
  }
  return offsets;
}

// The offset of the first chunk of `kind` in `bytes` (fails the test if there is none).
size_t first_chunk_of(const std::string& bytes, capture_format::ChunkKind kind) {
  for (const size_t offset : chunk_offsets(bytes)) {
    uint32_t found = 0;
    std::memcpy(&found, bytes.data() + offset, sizeof(found));
    if (found == static_cast<uint32_t>(kind)) return offset;
  }
  ADD_FAILURE() << "no chunk of kind " << static_cast<uint32_t>(kind);
  return 0;
}

TEST(Capture, AKnownKeyWithAValueOfAnotherTypeIsRefused) {
  std::string bytes = capture_with_args(int_arg(ArgKey::Stream, 3));
  // The ArgSets chunk's payload: count, id, the set's size, then the argument: key, type, value.
  const size_t chunk = first_chunk_of(bytes, capture_format::ChunkKind::ArgSets);
  const size_t type = chunk + capture_format::kChunkHeaderBytes + 8 + 4 + 8 + 1;
  ASSERT_EQ(bytes[type], static_cast<char>(ArgType::Int));
  bytes[type] = static_cast<char>(ArgType::Text);
  // The chunk's checksum, made right again, so the chunk's fields are what is refused.
  const uint32_t crc = crc32_of(std::string_view(bytes).substr(chunk + capture_format::kChunkHeaderBytes, 8 + 4 + 8 + 1 + 1 + 8));
  std::memcpy(&bytes[chunk + 4], &crc, sizeof(crc));
  const CaptureReading reading = read_capture(bytes);
  EXPECT_FALSE(reading.complete);
  EXPECT_NE(reading.problem.find("another type than its key"), std::string::npos) << reading.problem;
}

TEST(Capture, ACutCaptureKeepsEveryWholeChunkBeforeTheCut) {
  const std::string bytes = bytes_of(sample_capture());
  std::vector<size_t> ends = chunk_offsets(bytes);  // where each chunk ends: the next one's start
  ends.push_back(bytes.size());
  // A cut inside any chunk (in its header, in its payload) reads as the capture cut before it.
  for (size_t k = 1; k < ends.size(); ++k) {
    const CaptureReading before = read_capture(std::string_view(bytes).substr(0, ends[k - 1]));
    for (const size_t cut : {ends[k - 1] + 5, ends[k] - 1}) {
      const CaptureReading reading = read_capture(std::string_view(bytes).substr(0, cut));
      EXPECT_FALSE(reading.complete) << cut;
      EXPECT_NE(reading.problem.find("cut short"), std::string::npos) << reading.problem;
      EXPECT_EQ(bytes_of(reading.capture), bytes_of(before.capture)) << cut;
    }
  }
}

TEST(Capture, ACutCaptureIsReadUpToItsLastWholeThreadChunk) {
  const Capture capture = sample_capture();
  const std::string bytes = bytes_of(capture);
  // Up to the end of the first thread's events (its HostEvents chunk) and nothing after.
  const std::vector<size_t> offsets = chunk_offsets(bytes);
  const auto events = std::find(offsets.begin(), offsets.end(),
                                first_chunk_of(bytes, capture_format::ChunkKind::HostEvents));
  ASSERT_LT(events + 1, offsets.end());
  const size_t cut = *(events + 1);
  const CaptureReading reading = read_capture(std::string_view(bytes).substr(0, cut));
  EXPECT_FALSE(reading.complete);
  EXPECT_NE(reading.problem.find("no end"), std::string::npos) << reading.problem;
  ASSERT_EQ(reading.capture.host.threads.size(), 1u);
  EXPECT_EQ(loaded_host(reading.capture).threads[0].events.size(), capture.host.threads[0].events.size());
  // Without its window the capture keeps every event it holds.
  EXPECT_EQ(reading.capture.window.begin_ns, 1'000'000);
  EXPECT_EQ(reading.capture.window.end_ns, 8'000'000);
}

TEST(Capture, ACorruptChunkEndsTheReadingAtItAndSaysWhere) {
  std::string bytes = bytes_of(sample_capture());
  const size_t thread_chunk = first_chunk_of(bytes, capture_format::ChunkKind::Thread);
  bytes[thread_chunk + capture_format::kChunkHeaderBytes] ^= 0x40;  // a bit of its payload flips
  const CaptureReading reading = read_capture(bytes);
  EXPECT_FALSE(reading.complete);
  EXPECT_EQ(reading.problem, "the chunk at byte " + std::to_string(thread_chunk) +
                                 " (kind 4) is corrupt: its checksum does not match");
  EXPECT_TRUE(reading.capture.host.threads.empty());
  EXPECT_EQ(reading.capture.process.name, sample_capture().process.name);
}

TEST(Capture, ACorruptEventRecordEndsTheReadingAtItsChunk) {
  std::string bytes = bytes_of(sample_capture());
  const size_t events_chunk = first_chunk_of(bytes, capture_format::ChunkKind::HostEvents);  // the main thread's
  bytes[events_chunk + capture_format::kChunkHeaderBytes + 12 + 40] ^= 0x01;  // in its second record
  const CaptureReading reading = read_capture(bytes);
  EXPECT_FALSE(reading.complete);
  EXPECT_EQ(reading.problem, "the chunk at byte " + std::to_string(events_chunk) +
                                 " (kind 5) is corrupt: its checksum does not match");
  EXPECT_EQ(host_event_count(reading.capture), 0u);
}

TEST(Capture, WhatIsNotACaptureOfThisVersionIsRefused) {
  EXPECT_THROW(read_capture("{\"traceEvents\": []}"), CaptureFormatError);
  std::string bytes = bytes_of(sample_capture());
  const int newer = capture_format::kVersionMajor + 1;
  bytes[sizeof(capture_format::kMagic)] = static_cast<char>(newer);
  try {
    read_capture(bytes);
    FAIL() << "a capture of a newer major version was read";
  } catch (const CaptureFormatError& error) {
    EXPECT_EQ(std::string(error.what()), "capture format " + std::to_string(newer) + "." +
                                             std::to_string(capture_format::kVersionMinor) + ": this perfprof reads " +
                                             std::to_string(capture_format::kVersionMajor) + ".x");
  }
}

TEST(Capture, ChunksOfUnknownKindsAreSkipped) {
  std::string bytes = bytes_of(sample_capture());
  // A chunk of a kind a later minor version might add, with an empty payload, after the header.
  std::string chunk;
  ByteWriter out(chunk);
  out(uint32_t{999});
  out(uint32_t{0});  // CRC-32 of nothing
  out(uint64_t{0});
  bytes.insert(capture_format::kFileHeaderBytes, chunk);
  const CaptureReading reading = read_capture(bytes);
  EXPECT_TRUE(reading.complete) << reading.problem;
  EXPECT_EQ(reading.capture.host.threads.size(), 2u);
}

TEST(Capture, AFileSinkThatCannotWriteSaysWhy) {
  FileSink sink("/nonexistent-dir/capture.ppcap");
  EXPECT_FALSE(sink.write("x"));
  EXPECT_NE(sink.error().find("/nonexistent-dir/capture.ppcap"), std::string::npos) << sink.error();
  EXPECT_FALSE(write_capture(sample_capture(), sink));
}

// A capture of one thread with `ranges` ranges, whose events span several blocks of stored events.
Capture long_capture(int64_t ranges) {
  std::vector<RawEvent> events;
  for (int64_t k = 0; k < ranges; ++k) {
    const auto id = static_cast<uint64_t>(k + 1);
    events.push_back(begin_event(1'000 + 10 * k, id, "long_range", "user_annotation"));
    events.push_back(end_event(1'005 + 10 * k, id));
  }
  CollectedEvents host;
  host.threads.push_back(thread_events(0, kMainTid, "main", std::move(events)));
  return capture_of_this_process(std::move(host), {}, {0, 1'000 + 10 * ranges});
}

TEST(Capture, AFileKeepsItsEventsUntilTheTraceIsBuilt) {
  const TempDir dir;
  const Capture capture = long_capture(int64_t{StoredEvents::kBlockEvents} + 7);  // 2 blocks and a bit
  {
    FileSink sink(dir.file("long.ppcap"));
    ASSERT_TRUE(write_capture(capture, sink)) << sink.error();
  }
  CaptureReading reading = read_capture_file(dir.file("long.ppcap"));
  ASSERT_TRUE(reading.complete) << reading.problem;
  // Reading holds no event: they are read back from the file, a block at a time, when building.
  ASSERT_EQ(reading.capture.host.threads.size(), 1u);
  EXPECT_TRUE(reading.capture.host.threads[0].events.empty());
  EXPECT_EQ(host_event_count(reading.capture), host_event_count(capture));
  EXPECT_EQ(chrome_trace_of(std::move(reading.capture), dir.file("trace.json")),
            chrome_trace_of(capture, dir.file("trace.json")));
}

TEST(Capture, StoredEventsGoneFromTheFileWhenBuildingAreCountedAsDropped) {
  const TempDir dir;
  const std::string path = dir.file("cut_later.ppcap");
  const Capture capture = long_capture(1000);
  {
    FileSink sink(path);
    ASSERT_TRUE(write_capture(capture, sink)) << sink.error();
  }
  CaptureReading reading = read_capture_file(path);
  ASSERT_TRUE(reading.complete) << reading.problem;
  // The file is cut after it was read: the last 500 events are no longer there.
  const std::vector<size_t> chunks = chunk_offsets(test::read_file(path));
  const size_t events_chunk = chunks.at(3);  // after Process, Strings and Thread
  std::filesystem::resize_file(path, events_chunk + capture_format::kChunkHeaderBytes + 12 + 1500 * sizeof(RawEvent));
  const TraceModel model = build_trace(std::move(reading.capture));
  EXPECT_EQ(model.stats.dropped_events, 500u);
  EXPECT_EQ(model.ranges.size(), 750u);  // the 1500 events still there: 750 ranges, each whole
  EXPECT_EQ(model.stats.unfinished_ranges, 0u);
}

TEST(Capture, AFileIsReadAsItWasWritten) {
  const TempDir dir;
  const std::string path = dir.file("run.ppcap");
  const Capture capture = sample_capture();
  {
    FileSink sink(path);
    ASSERT_TRUE(write_capture(capture, sink)) << sink.error();
  }
  const CaptureReading reading = read_capture_file(path);
  EXPECT_TRUE(reading.complete);
  EXPECT_EQ(bytes_of(reading.capture), bytes_of(capture));
  EXPECT_THROW(read_capture_file(dir.file("missing.ppcap")), std::runtime_error);
}

}  // namespace
}  // namespace perfprof

namespace perfprof {
namespace {

// Records step `step` as ProfilerStep#N with two operators inside, on the calling thread.
void record_step(int step) {
  Recorder& recorder = Recorder::instance();
  const uint64_t id = Recorder::next_range_id();
  recorder.begin_range(id, intern("ProfilerStep#" + std::to_string(step)), RangeKind::Step, kNoArgs);
  for (int op = 0; op < 2; ++op) {
    const uint64_t op_id = Recorder::next_range_id();
    recorder.begin_range(op_id, intern("aten::add"), RangeKind::CpuOp, kNoArgs);
    recorder.end_range(op_id);
  }
  recorder.end_range(id);
}

std::vector<std::pair<std::string, uint8_t>> step_ranges(const TraceModel& model) {
  std::vector<std::pair<std::string, uint8_t>> steps;
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    const std::string& name = model.str(model.ranges.name[i]);
    if (name.rfind("ProfilerStep#", 0) == 0) steps.emplace_back(name, model.ranges.flags[i]);
  }
  return steps;
}

TEST(CaptureStream, EveryAppendReachesTheFileAndTheRecorderKeepsNothing) {
  test::RecorderSession session(kChannelSteps | kChannelOperators);
  const TempDir dir;
  const int64_t begin = now_ns();
  CaptureStream stream(dir.file("run.ppcap"));
  for (int step = 1; step <= 3; ++step) {
    record_step(step);
    stream.append(Recorder::instance().collect());
    EXPECT_TRUE(Recorder::instance().collect().threads.empty());  // what was appended left memory
  }
  EXPECT_EQ(stream.events_appended(), 3u * 6u);
  stream.finish({}, {begin, now_ns()});
  ASSERT_TRUE(stream.ok()) << stream.error();
  const CaptureReading reading = read_capture_file(dir.file("run.ppcap"));
  EXPECT_TRUE(reading.complete) << reading.problem;
  const TraceModel model = build_trace(reading.capture);
  EXPECT_EQ(step_ranges(model), (std::vector<std::pair<std::string, uint8_t>>{
                                    {"ProfilerStep#1", 0}, {"ProfilerStep#2", 0}, {"ProfilerStep#3", 0}}));
}

TEST(CaptureStream, AStepsNumberRidesInItsBeginEventSoStepsInternNoStrings) {
  test::RecorderSession session(kChannelSteps);
  const TempDir dir;
  const int64_t begin = now_ns();
  const StringId prefix = intern(std::string(kProfilerStepPrefix));
  const size_t strings_before = global_strings().snapshot().size();
  CaptureStream stream(dir.file("steps.ppcap"));
  for (uint64_t step = 1; step <= 3; ++step) {
    const uint64_t id = Recorder::next_range_id();
    Recorder::instance().begin_step(id, prefix, 1'000'000 + step);
    Recorder::instance().end_range(id);
    stream.append_recorded();
  }
  EXPECT_EQ(global_strings().snapshot().size(), strings_before);  // no string per step
  const Capture capture = complete_capture(stream, Recorder::instance().collect(), {}, {begin, now_ns()});
  const std::vector<std::pair<std::string, uint8_t>> expected{
      {"ProfilerStep#1000001", 0}, {"ProfilerStep#1000002", 0}, {"ProfilerStep#1000003", 0}};
  EXPECT_EQ(step_ranges(build_trace(capture)), expected);
  EXPECT_EQ(step_ranges(build_trace(read_capture_file(dir.file("steps.ppcap")).capture)), expected);  // the file too
}

TEST(CaptureStream, AStreamNeverFinishedKeepsEveryAppendedStep) {
  test::RecorderSession session(kChannelSteps | kChannelOperators);
  const TempDir dir;
  {
    CaptureStream stream(dir.file("killed.ppcap"));
    for (int step = 1; step <= 3; ++step) {
      record_step(step);
      stream.append(Recorder::instance().collect());
    }
    // Step 4 begins and the process dies: nothing more reaches the file.
    Recorder::instance().begin_range(Recorder::next_range_id(), intern("ProfilerStep#4"), RangeKind::Step,
                                     kNoArgs);
  }
  const CaptureReading reading = read_capture_file(dir.file("killed.ppcap"));
  EXPECT_FALSE(reading.complete);
  EXPECT_NE(reading.problem.find("no end"), std::string::npos) << reading.problem;
  const TraceModel model = build_trace(reading.capture);
  EXPECT_EQ(step_ranges(model), (std::vector<std::pair<std::string, uint8_t>>{
                                    {"ProfilerStep#1", 0}, {"ProfilerStep#2", 0}, {"ProfilerStep#3", 0}}));
}

TEST(CaptureStream, AppendedInPiecesBuildsTheTraceOfTheWholeCapture) {
  const TempDir dir;
  const Capture whole = sample_capture();
  {
    CaptureStream stream(dir.file("pieces.ppcap"));
    for (const ThreadEvents& thread : whole.host.threads) {  // each thread's events in two appends
      const auto half = thread.events.begin() + static_cast<std::ptrdiff_t>(thread.events.size() / 2);
      CollectedEvents first;
      first.threads.push_back({thread.index, thread.os_tid, thread.name, {thread.events.begin(), half}});
      stream.append(first);
      CollectedEvents second;
      second.threads.push_back({thread.index, thread.os_tid, thread.name, {half, thread.events.end()}});
      stream.append(second);
    }
    CollectedEvents rest = whole.host;
    rest.threads.clear();
    stream.append(rest);
    stream.finish(whole.gpu, whole.window);
    ASSERT_TRUE(stream.ok()) << stream.error();
  }
  Capture streamed = read_capture_file(dir.file("pieces.ppcap")).capture;
  streamed.other_threads = whole.other_threads;  // the sample names a thread this process does not have
  // The stream measured the process's clock offset when it was made, the sample a moment before:
  // under load the two measurements can differ by nanoseconds.
  streamed.process = whole.process;
  EXPECT_EQ(chrome_trace_of(std::move(streamed), dir.file("trace.json")),
            chrome_trace_of(whole, dir.file("trace.json")));
}

// Files may grow to `bytes` while it lives (a disk that fills up): writes past it fail with
// EFBIG instead of the process getting SIGXFSZ.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(uint64_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = nullptr;
};

TEST(CaptureStream, ADiskFullKeepsWhatTheFileCannotTakeInMemoryAndEveryEventOnce) {
  test::RecorderSession session(kChannelSteps | kChannelOperators);
  const TempDir dir;
  const std::string path = dir.file("full.ppcap");
  const int64_t begin = now_ns();
  CaptureStream stream(path);
  record_step(1);
  stream.append_recorded();
  ASSERT_TRUE(stream.ok()) << stream.error();
  const uintmax_t size_after_step_1 = std::filesystem::file_size(path);
  Capture capture;
  {
    // Room for a few bytes more: step 2's append fails part-way.
    const FileSizeLimit limit(size_after_step_1 + 40);
    record_step(2);
    stream.append_recorded();
    EXPECT_FALSE(stream.ok());
    EXPECT_NE(stream.error().find("full.ppcap"), std::string::npos) << stream.error();
    record_step(3);
    stream.append_recorded();
    capture = complete_capture(stream, Recorder::instance().collect(), {}, {begin, now_ns()});
  }
  // The file was cut back to its last whole append: it holds step 1 and nothing of the others.
  EXPECT_EQ(std::filesystem::file_size(path), size_after_step_1);
  EXPECT_EQ(stream.events_appended(), 6u);
  EXPECT_EQ(stream.events_held_back(), 2u * 6u);
  EXPECT_EQ(step_ranges(build_trace(read_capture_file(path).capture)),
            (std::vector<std::pair<std::string, uint8_t>>{{"ProfilerStep#1", 0}}));
  // The trace of the session has every step once, nothing dropped.
  const TraceModel model = build_trace(std::move(capture));
  EXPECT_EQ(step_ranges(model), (std::vector<std::pair<std::string, uint8_t>>{
                                    {"ProfilerStep#1", 0}, {"ProfilerStep#2", 0}, {"ProfilerStep#3", 0}}));
  EXPECT_EQ(model.ranges.size(), 9u);
  EXPECT_EQ(model.stats.dropped_events, 0u);
}

TEST(CaptureStream, AnUnwritablePathIsReportedNotThrown) {
  CaptureStream stream("/nonexistent-dir/run.ppcap");
  stream.append(CollectedEvents{});
  stream.finish({}, {});
  EXPECT_FALSE(stream.ok());
  EXPECT_NE(stream.error().find("/nonexistent-dir/run.ppcap"), std::string::npos);
}

}  // namespace
}  // namespace perfprof

namespace perfprof {
namespace {

TEST(Capture, AppendingKeepsTheProcessAsTheCaptureFirstDescribedIt) {
  // A streamed capture's file holds the clock offset taken when it was created; the trace built
  // in the process at stop must use the same one, or its timestamps differ from the file's.
  Capture first;
  first.process = {42, "job", 1'000};
  Capture later;
  later.process = {42, "job", 1'003};
  later.window = {5, 9};
  append_capture(first, std::move(later));
  EXPECT_EQ(first.process.unix_offset_ns, 1'000);
  EXPECT_EQ(first.window.end_ns, 9);
  Capture empty;
  Capture described;
  described.process = {7, "job", 2'000};
  append_capture(empty, std::move(described));
  EXPECT_EQ(empty.process.pid, 7);
}

}  // namespace
}  // namespace perfprof
