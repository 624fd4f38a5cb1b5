// The defects a fault-injection pass found in the capture reader (issue 34): captures whose
// payloads were changed and their CRCs recomputed. Each test makes one such capture from a
// corpus capture, and checks that the chunk is refused in one line naming it and what is wrong,
// that the steps before it are kept, and that the trace built from them exports.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/profiler_steps.h"
#include "capture/byte_codec.h"
#include "capture/capture_fields.h"
#include "capture/capture_file.h"
#include "capture/capture_format.h"
#include "capture_fuzz/allocation_budget.h"
#include "capture_fuzz/capture_case.h"
#include "capture_fuzz/capture_mutator.h"
#include "trace/trace_builder.h"

namespace perfprof::fuzz {
namespace {

using capture_format::ChunkKind;
using capture_format::kChunkHeaderBytes;

std::string corpus_capture(const std::string& name) {
  std::ifstream in(std::filesystem::path(PERFPROF_CAPTURE_CORPUS) / name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The last chunk of `kind`: the steps before it are in the chunks before it.
ChunkSpan last_chunk(const std::string& bytes, ChunkKind kind) {
  ChunkSpan last;
  for (const ChunkSpan& span : chunks_of(bytes)) {
    if (span.kind == static_cast<uint32_t>(kind)) last = span;
  }
  EXPECT_NE(last.offset, 0u) << "no chunk of kind " << static_cast<int>(kind);
  return last;
}

// `bytes` with the payload of the chunk at `span` replaced by `payload`, its size and CRC fixed.
std::string with_payload(std::string bytes, const ChunkSpan& span, const std::string& payload) {
  bytes.replace(span.offset + kChunkHeaderBytes, span.payload_size, payload);
  const ChunkSpan changed{span.offset, span.kind, payload.size()};
  std::memcpy(bytes.data() + span.offset + 8, &changed.payload_size, sizeof(uint64_t));
  fix_checksum(bytes, changed);
  return bytes;
}

// The last chunk of `kind`, decoded as a T, changed by `change` and encoded again.
template <typename T>
std::string with_changed_chunk(const std::string& bytes, ChunkKind kind, const std::function<void(T&)>& change) {
  const ChunkSpan span = last_chunk(bytes, kind);
  T records;
  ByteReader in(std::string_view(bytes).substr(span.offset + kChunkHeaderBytes, span.payload_size));
  in(records);
  change(records);
  std::string payload;
  ByteWriter out(payload);
  out(records);
  return with_payload(bytes, span, payload);
}

// What each defect test checks: the chunk refused in one line saying `what`, the capture read up
// to it with its first steps, the trace built and exported (run_case: no crash, in budget).
void expect_refused_after_the_first_steps(const std::string& bytes, ChunkKind kind, const std::string& what) {
  const ChunkSpan span = last_chunk(bytes, kind);
  CaptureReading reading = read_capture(bytes);
  EXPECT_FALSE(reading.complete);
  EXPECT_EQ(reading.problem, fmt::format("the chunk at byte {} (kind {}) does not decode: {}", span.offset,
                                         static_cast<int>(kind), what));
  const std::vector<ProfilerStep> steps = profiler_steps(build_trace(std::move(reading.capture)));
  EXPECT_FALSE(steps.empty()) << "the steps before the bad chunk are kept";
  const std::string dir = (std::filesystem::temp_directory_path() / fmt::format("perfprof-defect-{}", getpid())).string();
  std::filesystem::create_directories(dir);
  for (const bool from_file : {false, true}) {
    const CaseResult result = run_case(bytes, dir, from_file, true);
    EXPECT_EQ(result.outcome, Outcome::Incomplete) << result.failure;
  }
  std::filesystem::remove_all(dir);
}

// Was: a segfault in memory::restrict_to_window, indexing the storages with the event's storage.
TEST(CaptureDefects, AnAllocatorEventNamingAStorageOutOfRangeIsRefused) {
  const std::string bytes = with_changed_chunk<memory::MemoryEvents>(
      corpus_capture("cpu_ops.ppcap"), ChunkKind::MemoryEvents,
      [](memory::MemoryEvents& events) { events.allocations.at(0).storage = 100'000; });
  const size_t storages = [&] {
    memory::MemoryEvents events;
    const ChunkSpan span = last_chunk(bytes, ChunkKind::MemoryEvents);
    ByteReader in(std::string_view(bytes).substr(span.offset + kChunkHeaderBytes, span.payload_size));
    in(events);
    return events.storages.size();
  }();
  expect_refused_after_the_first_steps(bytes, ChunkKind::MemoryEvents,
                                       fmt::format("an allocator event names storage 100000 of the chunk's {}", storages));
}

// Was: a segfault in memory::categorize, following a data-flow node's input to its storage.
TEST(CaptureDefects, ADataFlowNodeInputNamingAStorageOutOfRangeIsRefused) {
  size_t storages = 0;
  const std::string bytes = with_changed_chunk<memory::MemoryEvents>(
      corpus_capture("cpu_ops.ppcap"), ChunkKind::MemoryEvents, [&](memory::MemoryEvents& events) {
        storages = events.storages.size();
        for (memory::FlowNode& node : events.nodes) {
          if (!node.inputs.empty()) {
            node.inputs[0].storage = -7;
            return;
          }
        }
        FAIL() << "no node with an input";
      });
  expect_refused_after_the_first_steps(bytes, ChunkKind::MemoryEvents,
                                       fmt::format("a data-flow node's input names storage -7 of the chunk's {}", storages));
}

// Was: a segfault in write_chrome_trace, looking up the text of a range's name.
TEST(CaptureDefects, ACompletedRangeNamingAStringNoChunkGivesIsRefused) {
  const std::string bytes = with_changed_chunk<std::vector<CompletedRange>>(
      corpus_capture("cpu_ops.ppcap"), ChunkKind::CompletedRanges,
      [](std::vector<CompletedRange>& ranges) { ranges.at(0).name = 0x00ab'cdef; });
  const CaptureReading reading = read_capture(bytes);
  expect_refused_after_the_first_steps(
      bytes, ChunkKind::CompletedRanges,
      fmt::format("a completed range names string 11259375, which no Strings chunk before it gives (they end at {})",
                  reading.capture.strings.size()));
}

// Was: `basic_string::substr: __pos (which is 13) > this->size() (which is 0)` as the only message
// of `perfprof analyse`: the step analyses take a step's number from after its name's prefix.
TEST(CaptureDefects, AScheduleStepNotNamedProfilerStepIsRefused) {
  const std::string bytes = with_changed_chunk<std::vector<CompletedRange>>(
      corpus_capture("cpu_ops.ppcap"), ChunkKind::CompletedRanges,
      [](std::vector<CompletedRange>& ranges) { ranges.at(0).kind = RangeKind::Step; ranges.at(0).name = 0; });
  expect_refused_after_the_first_steps(
      bytes, ChunkKind::CompletedRanges,
      "a completed range is a schedule step whose name (string 0) does not begin with ProfilerStep#");
}

// The last chunk of `kind` replaced by one giving the single entry `id` (the empty string, the
// empty argument set).
std::string with_single_entry(const std::string& bytes, ChunkKind kind, uint32_t id) {
  std::string payload;
  ByteWriter out(payload);
  out(uint64_t{1});
  out(id);
  if (kind == ChunkKind::Strings) {
    out(std::string());
  } else {
    out(ArgSet{});
  }
  return with_payload(bytes, last_chunk(bytes, kind), payload);
}

// Reads `bytes` within `budget` bytes of allocations; returns the most it held at once.
uint64_t peak_reading(const std::string& bytes, uint64_t budget) {
  const AllocationBudget held(budget);
  EXPECT_NO_THROW(read_capture(bytes));
  EXPECT_EQ(held.stats().refused, 0u) << "a request for " << held.stats().largest_refused << " bytes";
  return held.stats().peak_bytes;
}

// Was: the reader sized the string table by the id, 2^31 strings: 19.9 GB of memory in 40 s.
TEST(CaptureDefects, AStringIdPastTheCeilingIsRefusedBeforeTheTableIsSized) {
  const std::string bytes = with_single_entry(corpus_capture("cpu_ops.ppcap"), ChunkKind::Strings, 0x7fff'0000);
  EXPECT_LT(peak_reading(bytes, uint64_t{1} << 30), uint64_t{16} << 20);
  expect_refused_after_the_first_steps(bytes, ChunkKind::Strings,
                                       "string 2147418112 is past the ceiling of 2097152 ids a capture may use");
}

// Was: `MemoryError: std::bad_alloc` out of perfprof analyse, the argument-set table sized by
// an id of billions.
TEST(CaptureDefects, AnArgumentSetIdPastTheCeilingIsRefusedBeforeTheTableIsSized) {
  const std::string bytes = with_single_entry(corpus_capture("cpu_ops.ppcap"), ChunkKind::ArgSets, 0xffff'fff0);
  EXPECT_LT(peak_reading(bytes, uint64_t{1} << 30), uint64_t{16} << 20);
  expect_refused_after_the_first_steps(
      bytes, ChunkKind::ArgSets, "argument set 4294967280 is past the ceiling of 1048576 ids a capture may use");
}

// A list's count is checked against its elements' smallest encoding before the list is
// allocated: 1 MiB of bytes claiming a million metadata entries (9 bytes each at least) was
// allocated as a million 72-byte records before the reader found the bytes missing.
TEST(CaptureDefects, AListLongerThanItsChunkIsRefusedBeforeItIsAllocated) {
  std::string payload(1 << 20, '\0');
  const uint64_t count = payload.size() - sizeof(uint64_t);
  std::memcpy(payload.data(), &count, sizeof(count));
  const AllocationBudget held(uint64_t{1} << 30);
  std::vector<RunMetadata> entries;
  ByteReader in(payload);
  EXPECT_THROW(
      {
        try {
          in(entries);
        } catch (const CaptureFormatError& error) {
          EXPECT_STREQ(error.what(), "a list of 1048568 items is longer than the 1048568 bytes left in its chunk");
          throw;
        }
      },
      CaptureFormatError);
  EXPECT_LT(held.stats().peak_bytes, uint64_t{1} << 20);
}

// Found by the fuzz test (corpus/found/metadata_not_utf8.ppcap): perfprof analyse failed with
// `'utf-8' codec can't decode byte 0xff in position 11` as its only message, the metadata reaching
// Python as str.
TEST(CaptureDefects, MetadataThatIsNotUtf8IsRefused) {
  const std::string bytes = corpus_capture("found/metadata_not_utf8.ppcap");
  const CaptureReading reading = read_capture(bytes);
  EXPECT_FALSE(reading.complete);
  EXPECT_EQ(reading.problem, "the chunk at byte 891 (kind 19) does not decode: a metadata entry is not UTF-8 text");
  EXPECT_EQ(reading.capture.metadata.size(), 2u) << "the entries of the chunks before it";
}

// Found by the fuzz test under UBSan (corpus/found/pid_past_linux_limit.ppcap): the database packs
// the pid beside a thread id (pid * 2^24), which overflowed.
TEST(CaptureDefects, APidNoProcessHasIsRefused) {
  const std::string bytes = with_changed_chunk<ProcessInfo>(corpus_capture("cpu_ops.ppcap"), ChunkKind::Process,
                                                            [](ProcessInfo& process) { process.pid = int64_t{1} << 40; });
  const CaptureReading reading = read_capture(bytes);
  EXPECT_FALSE(reading.complete);
  EXPECT_EQ(reading.problem, "the chunk at byte 16 (kind 1) does not decode: the process has pid 1099511627776, which no "
                             "process has");
}

// Found by the fuzz test under UBSan (corpus/found/ranges_sharing_an_id_left_open.ppcap): of two
// unfinished ranges sharing an id, the builder closed one at the window's end and left the other
// ending at INT64_MIN, which the operator tree subtracted from.
TEST(CaptureDefects, UnfinishedRangesSharingAnIdAreBothClosedAtTheWindowEnd) {
  const std::string bytes = corpus_capture("found/ranges_sharing_an_id_left_open.ppcap");
  const TraceModel model = build_trace(read_capture(bytes).capture);
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    EXPECT_GE(model.ranges.end_ns[i], model.ranges.begin_ns[i]) << "range " << i;
  }
  EXPECT_GE(model.stats.unfinished_ranges, 2u);
}

}  // namespace
}  // namespace perfprof::fuzz
