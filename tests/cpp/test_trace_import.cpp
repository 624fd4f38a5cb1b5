// The Chrome trace importer: a Kineto-style trace (as torch.profiler writes it) read into the
// model, plain and gzip-compressed, and files that are not such traces refused in one line.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <string>

#include "import/json_reader.h"
#include "import/trace_import.h"
#include "test_util.h"

namespace perfprof {
namespace {

// A small trace in torch.profiler's layout: a step around an operator that launches a kernel
// and a copy, an allocator event, Kineto's own span and markers, device properties, a rank.
constexpr const char* kKinetoTrace = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85000000000, "computeMajor": 9,
    "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
    "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
    "sharedMemPerMultiprocessor": 233472, "numSms": 132, "sharedMemPerBlockOptin": 232448}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
  "trace_id": "ABC123",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 42, "tid": 0, "args": {"name": "python3"}},
  {"ph": "M", "name": "thread_name", "pid": 42, "tid": 43, "args": {"name": "thread 43 (python3)"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 42, "tid": 43, "ts": 1000.5, "dur": 100,
   "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 42, "tid": 43, "ts": 1010.1234, "dur": 50.0005,
   "args": {"External id": 2, "Sequence number": 5, "Fwd thread id": 0, "Input Dims": [[8, 16], [16, 4]],
            "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 42, "tid": 43, "ts": 1090, "dur": 5,
   "args": {"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 2,
            "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Rank": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 42, "tid": 43, "ts": 1020, "dur": 5,
   "args": {"External id": 2, "cbid": 211, "correlation": 77}},
  {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1030, "dur": 20,
   "args": {"External id": 2, "device": 0, "context": 1, "stream": 7, "correlation": 77,
            "registers per thread": 32, "shared memory": 1024, "grid": [4, 2, 1], "block": [128, 1, 1]}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": 1060,
   "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 78, "bytes": 4096}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 42, "tid": 43, "ts": 1011,
   "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": 512, "Addr": 18446744073709551000,
            "Device Type": 1, "Device Id": 0}},
  {"ph": "s", "id": 77, "pid": 42, "tid": 43, "ts": 1020, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 1030, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
   "ts": 990, "dur": 200},
  {"ph": "X", "cat": "overhead", "name": "Instrumentation", "pid": 42, "tid": 43, "ts": 1200, "dur": 1},
  {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 1300}
  ],
  "traceName": "t.json"
})json";

ImportedTrace import_text(const test::TempDir& dir, const std::string& text, const char* name = "t.json") {
  const std::string path = dir.file(name);
  test::write_file(path, text);
  return import_chrome_trace(path);
}

// The message import_chrome_trace throws for `text`.
std::string import_error(const std::string& text) {
  test::TempDir dir;
  try {
    import_text(dir, text);
  } catch (const TraceImportError& error) {
    return error.what();
  }
  return "(no error)";
}

size_t row_named(const TraceModel& model, std::string_view name) {
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    if (model.str(model.ranges.name[i]) == name) return i;
  }
  ADD_FAILURE() << "no range " << name;
  return 0;
}

TEST(TraceImport, KinetoTraceBecomesTheModel) {
  test::TempDir dir;
  const ImportedTrace imported = import_text(dir, kKinetoTrace);
  const TraceModel& m = imported.model;

  EXPECT_EQ(m.pid, 42);
  EXPECT_EQ(m.process_name, "python3");
  EXPECT_EQ(m.unix_offset_ns, 1700000000000000000);
  EXPECT_EQ(m.window_begin_ns, 1000500);  // Kineto's span and markers are not the run's
  EXPECT_EQ(m.window_end_ns, 1100500);

  const RangeTable& r = m.ranges;
  const size_t step = row_named(m, "ProfilerStep#7");
  const size_t op = row_named(m, "aten::mm");
  const size_t launch = row_named(m, "cudaLaunchKernel");
  EXPECT_EQ(r.kind[step], RangeKind::Step);
  EXPECT_EQ(r.kind[op], RangeKind::CpuOp);
  EXPECT_EQ(r.kind[launch], RangeKind::CudaRuntime);
  EXPECT_EQ(r.begin_ns[op], 1010123);  // microseconds with fractional nanoseconds, rounded
  EXPECT_EQ(r.end_ns[op], 1010123 + 50001);
  EXPECT_EQ(r.sequence[op], 5);
  EXPECT_EQ(m.threads[r.track[op]].os_tid, 43);
  EXPECT_EQ(m.threads[r.track[op]].name, "thread 43 (python3)");
  const ArgSet& op_args = m.args(r.args[op]);
  ASSERT_NE(op_args.find<IntTree>(ArgKey::InputDims), nullptr);
  EXPECT_EQ(int_lists_of(*op_args.find<IntTree>(ArgKey::InputDims)),
            (std::vector<std::vector<int64_t>>{{8, 16}, {16, 4}}));
  ASSERT_NE(op_args.find<std::vector<StringId>>(ArgKey::InputTypes), nullptr);
  EXPECT_EQ(m.str(op_args.find<std::vector<StringId>>(ArgKey::InputTypes)->at(1)), "float");
  // A collective's parameters, typed.
  const ArgSet& comms = m.args(r.args[row_named(m, "record_param_comms")]);
  ASSERT_NE(comms.find<StringId>(ArgKey::CollectiveName), nullptr);
  EXPECT_EQ(m.str(*comms.find<StringId>(ArgKey::CollectiveName)), "allreduce");
  EXPECT_EQ(*comms.find<int64_t>(ArgKey::InMsgElements), 1024);
  EXPECT_EQ(*comms.find<int64_t>(ArgKey::GroupSize), 2);
  EXPECT_EQ(m.str(*comms.find<StringId>(ArgKey::ProcessGroupRanks)), "[0, 1]");
  // The launch is linked to the operator around it, and the kernel to the launch.
  EXPECT_EQ(r.correlation[launch], 77u);
  EXPECT_EQ(r.external_id[launch], r.id[op]);

  ASSERT_EQ(m.gpu.activities.size(), 2u);
  EXPECT_TRUE(m.gpu.collected);
  const GpuActivity& kernel = m.gpu.activities[0];
  EXPECT_EQ(kernel.kind, GpuActivityKind::Kernel);
  EXPECT_EQ(m.str(kernel.name), "gemm_kernel");
  EXPECT_EQ(kernel.start_ns, 1030000);
  EXPECT_EQ(kernel.end_ns, 1050000);
  EXPECT_EQ(kernel.stream, 7u);
  EXPECT_EQ(kernel.correlation, 77u);
  EXPECT_EQ(kernel.grid[0], 4u);
  EXPECT_EQ(kernel.grid[1], 2u);
  EXPECT_EQ(kernel.block[0], 128u);
  EXPECT_EQ(kernel.registers_per_thread, 32);
  EXPECT_EQ(kernel.static_shared_memory, 1024);
  EXPECT_EQ(m.gpu.external_ids[0], r.id[op]);
  const GpuActivity& copy = m.gpu.activities[1];
  EXPECT_EQ(copy.kind, GpuActivityKind::Memcpy);
  EXPECT_EQ(copy.copy_kind, 2);  // DtoH
  EXPECT_EQ(copy.bytes, 4096u);

  ASSERT_EQ(m.gpu.devices.size(), 1u);
  EXPECT_EQ(m.gpu.devices[0].name, "NVIDIA H100");
  EXPECT_EQ(m.gpu.devices[0].sm_count, 132u);
  EXPECT_EQ(m.gpu.devices[0].max_warps_per_sm, 64u);

  ASSERT_EQ(m.memory.events.allocations.size(), 1u);
  const memory::Allocation& allocation = m.memory.events.allocations[0];
  EXPECT_EQ(allocation.ptr, 18446744073709551000u);  // beyond int64: read unsigned
  EXPECT_EQ(allocation.bytes, 512);
  EXPECT_EQ(allocation.total_reserved, 2097152);
  EXPECT_EQ(allocation.device.name(), "cuda:0");

  EXPECT_EQ(imported.distributed.backend, "nccl");
  EXPECT_EQ(imported.distributed.rank, 1);
  EXPECT_EQ(imported.distributed.world_size, 2);
  ASSERT_EQ(imported.metadata.size(), 1u);
  EXPECT_EQ(imported.metadata[0], (std::pair<std::string, std::string>{"trace_id", "\"ABC123\""}));
  EXPECT_EQ(imported.notes, "left out 1 'overhead' (X); the trace has no tensor roles (memory categories read Unknown)");
}

TEST(TraceImport, GzipTraceReadsTheSame) {
  test::TempDir dir;
  const std::string path = dir.file("t.json.gz");
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const std::string text = kKinetoTrace;
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(file);
  const TraceModel zipped = import_chrome_trace(path).model;
  const TraceModel plain = import_text(dir, kKinetoTrace).model;
  EXPECT_EQ(zipped.ranges.begin_ns, plain.ranges.begin_ns);
  EXPECT_EQ(zipped.ranges.end_ns, plain.ranges.end_ns);
  EXPECT_EQ(zipped.gpu.activities.size(), plain.gpu.activities.size());
  EXPECT_EQ(zipped.strings, plain.strings);
}

TEST(TraceImport, TraceCutShortIsOneLineNamingTheFile) {
  // Cut anywhere: inside a string, a number, a literal, between tokens, after a key.
  const std::string text = kKinetoTrace;
  for (size_t cut = text.find("traceEvents"); cut < text.size() - 2; cut += 7) {
    const std::string error = import_error(text.substr(0, cut));
    EXPECT_NE(error.find("t.json: byte "), std::string::npos) << error;
    EXPECT_NE(error.find("cut short"), std::string::npos) << "cut at " << cut << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
}

TEST(TraceImport, GzipCutShortIsRefused) {
  test::TempDir dir;
  const std::string path = dir.file("t.json.gz");
  gzFile file = gzopen(path.c_str(), "wb");
  const std::string text = kKinetoTrace;
  gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
  gzclose(file);
  const std::string bytes = test::read_file(path);
  test::write_file(path, bytes.substr(0, bytes.size() / 2));
  try {
    import_chrome_trace(path);
    FAIL() << "a gzip stream cut in half was read";
  } catch (const TraceImportError& error) {
    EXPECT_NE(std::string(error.what()).find("cut short"), std::string::npos) << error.what();
  }
}

TEST(TraceImport, EachKindOfBadFileIsRefused) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": "soon", "dur": 1}]})",
       "event 0 (aten::mm): its \"ts\" is not a number of microseconds in range"},
      {R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1}]})",
       "event 0 (a): it has no \"dur\""},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1,
           "args": {"grid": [1, 2]}}]})",
       "event 0 (k): its \"grid\" is not [x, y, z]"},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1,
           "args": {"stream": 99999999999}}]})",
       "event 0 (k): its \"stream\" (99999999999) is out of range"},
      {R"({"traceEvents": [{"ph": "X", "ts": 99999999999999999999, "dur": 1}]})", "is not a number of microseconds"},
      {R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 9000000000000000,
           "dur": 9000000000000000}]})",
       "event 0 (a): it ends past the clock's range"},
      {R"({"traceEvents": [{"ph": "X",, }]})", "byte 28: expected a member's name, found ','"},
      {R"({"traceEvents": [{"args": {"a": )" + std::string(100, '[') + std::string(100, ']') + "}}]}",
       "objects and arrays nested deeper than 64"},
      {R"({"traceEvents": []} trailing)", "expected the end of the file after the document, found 't'"},
      {R"({"distributedInfo": {"rank": 3, "world_size": 2}, "traceEvents": []})", "has rank 3 outside its world_size 2"},
      {R"({"traceEvents": [{"ph": "X", "name": "\ud800"}]})", "high surrogate without its low half"},
      {"\x1f\x8b not gzip really", "byte 0: cannot be read: unknown compression method"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string error = import_error(text);
    EXPECT_NE(error.find(expected), std::string::npos) << "got: " << error << "\nfor: " << text;
    EXPECT_NE(error.find("t.json: "), std::string::npos) << error;
  }
}

TEST(TraceImport, MissingFileIsRefused) {
  try {
    import_chrome_trace("/nonexistent/t.json");
    FAIL();
  } catch (const TraceImportError& error) {
    EXPECT_EQ(std::string(error.what()), "/nonexistent/t.json: cannot be opened: No such file or directory");
  }
}

TEST(TraceImport, MicrosecondsToNanosecondsIsExact) {
  int64_t ns = 0;
  ASSERT_TRUE(json_us_to_ns("5015622712364.107", ns));
  EXPECT_EQ(ns, 5015622712364107);  // a double would be off by one here
  ASSERT_TRUE(json_us_to_ns("1.0005", ns));
  EXPECT_EQ(ns, 1001);
  ASSERT_TRUE(json_us_to_ns("-2.5", ns));
  EXPECT_EQ(ns, -2500);
  ASSERT_TRUE(json_us_to_ns("1.5e3", ns));
  EXPECT_EQ(ns, 1500000);
  EXPECT_FALSE(json_us_to_ns("99999999999999999", ns));
}

TEST(TraceImport, JsonArrayFormatAndAsyncSlices) {
  test::TempDir dir;
  const ImportedTrace imported = import_text(dir, R"([
    {"ph": "b", "cat": "user_annotation", "name": "load", "id": "0x5", "pid": 3, "tid": 4, "ts": 10},
    {"ph": "e", "cat": "user_annotation", "name": "load", "id": "0x5", "pid": 3, "tid": 9, "ts": 30},
    {"ph": "C", "name": "queue", "pid": 3, "ts": 20, "args": {"value": 2.5}},
    {"ph": "b", "cat": "user_annotation", "name": "never ends", "id": 6, "pid": 3, "tid": 4, "ts": 25}
  ])");
  const TraceModel& m = imported.model;
  ASSERT_EQ(m.ranges.size(), 1u);
  EXPECT_EQ(m.ranges.begin_ns[0], 10000);
  EXPECT_EQ(m.ranges.end_ns[0], 30000);
  ASSERT_EQ(m.counters.size(), 1u);
  EXPECT_EQ(m.str(m.counters.name[0]), "queue");
  EXPECT_EQ(m.counters.value[0], 2.5);
  EXPECT_EQ(imported.notes.substr(0, imported.notes.find(';')), "left out 1 async slices that never end (b)");
}

}  // namespace
}  // namespace perfprof
