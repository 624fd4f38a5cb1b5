// The memory data files: the timeline JSON and raw JSON in torch.profiler's formats
// (export_memory_timeline, export_memory_timeline_raw), and the two CSV tables.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "export/memory_csv.h"
#include "export/memory_timeline.h"
#include "json_checker.h"
#include "memory_builder.h"
#include "memory/categorizer.h"
#include "memory/memory_events.h"
#include "memory/timeline.h"
#include "model_builder.h"
#include "test_util.h"

namespace perfprof {
namespace {

using memory::Category;
using memory::Device;
using memory::DeviceType;
using memory::MemoryEvents;
using memory::Write;

constexpr Device kCpu{};
constexpr Device kCuda0{DeviceType::kCuda, 0};
constexpr int64_t kOffset = 1'000'000;  // ns from the events' clock to Unix time
constexpr int64_t kMiB = 1024 * 1024;

using test::add_allocation;
using test::allocator_event;

// W (a known parameter, 400 B) pre-exists; X (100 B) is made at 1000 ns; Y = mm(X, W) (200 B)
// at 2100 ns; the backward pass overwrites Y at 3000 ns (making an uncategorized version) and
// frees it at 4100 ns. A CUDA allocation at 2500 ns belongs to no CPU file.
MemoryEvents forward_backward() {
  MemoryEvents e;
  e.storages = {{1, 0x1000, kCpu, 400}, {2, 0x2000, kCpu, 100}, {3, 0x3000, kCpu, 200}};
  const int32_t w = 0, x = 1, y = 2;
  e.nodes.push_back({1000, false, {}, {add_allocation(e, allocator_event(1000, 0x2000, 100, kCpu, x))}});
  e.nodes.push_back({2000, false, {{x, Write::kNo}, {w, Write::kNo}},
                     {add_allocation(e, allocator_event(2100, 0x3000, 200, kCpu, y))}});
  e.nodes.push_back({2500, false, {}, {add_allocation(e, allocator_event(2500, 0x9000, 64, kCuda0, -1))}});
  e.nodes.push_back({3000, true, {{y, Write::kYes}}, {}});
  e.nodes.push_back({4000, true, {}, {add_allocation(e, allocator_event(4100, 0x3000, -200, kCpu, y))}});
  e.known_roles.push_back({w, Category::kParameter});
  return e;
}

// --- write_memory_timeline_json ------------------------------------------------------------

TEST(MemoryExports, TimelineJsonIsTimesThenSizesWithALeadingZero) {
  const MemoryEvents events = forward_backward();
  const memory::MemoryProfile profile = memory::categorize(events);
  const memory::MemoryTimeline timeline = memory::build_timeline(profile, events, kCpu, kOffset);
  test::TempDir dir;
  write_memory_timeline_json(timeline, dir.file("timeline.json"));

  const std::string text = test::read_file(dir.file("timeline.json"));
  EXPECT_EQ(text,
            "[[1001, 1002, 1003, 1004], ["
            "[0, 400, 0, 100, 0, 0, 0, 0, 0], "
            "[0, 400, 0, 100, 0, 200, 0, 0, 0], "
            "[0, 400, 0, 100, 0, 0, 0, 0, 200], "
            "[0, 400, 0, 100, 0, 0, 0, 0, 0]]]");
  const test::Json json = test::parse_json(text);
  ASSERT_EQ(json.items.size(), 2u);
  EXPECT_EQ(json.items[0].items.size(), json.items[1].items.size());
  for (const test::Json& sizes : json.items[1].items) EXPECT_EQ(sizes.items.size(), 1 + memory::kNumCategories);
}

TEST(MemoryExports, TimelineJsonOfNothingIsTwoEmptyLists) {
  test::TempDir dir;
  write_memory_timeline_json(memory::MemoryTimeline{}, dir.file("empty.json"));
  EXPECT_EQ(test::read_file(dir.file("empty.json")), "[[], []]");
}

TEST(MemoryExports, TimelineJsonIsCompressedWhenTheNameEndsInGz) {
  memory::MemoryTimeline timeline;
  timeline.times_us = {5};
  timeline.bytes.push_back({});
  timeline.bytes[0][memory::index_of(Category::kGradient)] = 7;
  test::TempDir dir;
  write_memory_timeline_json(timeline, dir.file("timeline.json.gz"));
  EXPECT_EQ(test::read_gzip_file(dir.file("timeline.json.gz")), "[[5], [[0, 0, 0, 0, 0, 0, 7, 0, 0]]]");
}

// --- write_memory_timeline_raw -------------------------------------------------------------

TEST(MemoryExports, RawTimelineListsEveryChangeOfTheDevice) {
  const MemoryEvents events = forward_backward();
  const memory::MemoryProfile profile = memory::categorize(events);
  test::TempDir dir;
  write_memory_timeline_raw(profile, kCpu, kOffset, dir.file("raw.json"));

  // [time_ns, action, bytes, category]: PREEXISTING 1, CREATE 2, INCREMENT_VERSION 3 (what the
  // old version loses, what the new one gains), DESTROY 4; category 7 is none.
  EXPECT_EQ(test::read_file(dir.file("raw.json")),
            "[[-1, 1, 400, 0], "
            "[1001000, 2, 100, 2], "
            "[1002100, 2, 200, 4], "
            "[1003000, 3, -200, 4], [1003000, 3, 200, 7], "
            "[1004100, 4, -200, 7]]");

  write_memory_timeline_raw(profile, kCuda0, kOffset, dir.file("raw_cuda.json"));
  EXPECT_EQ(test::read_file(dir.file("raw_cuda.json")), "[[1002500, 2, 64, 7]]");

  write_memory_timeline_raw(profile, Device{DeviceType::kCuda, 1}, kOffset, dir.file("raw_none.json"));
  EXPECT_EQ(test::read_file(dir.file("raw_none.json")), "[]");
}

// --- CSV tables ----------------------------------------------------------------------------

StringId add_string(TraceModel& model, std::string_view text) {
  model.strings.emplace_back(text);
  return static_cast<StringId>(model.strings.size() - 1);
}

// Track 0: module Net [1000, 9000] holding Linear [1500, 5000], in which aten::empty makes and
// frees 1 MiB (a temporary); aten::ones makes 512 KiB on CUDA inside Net only. Track 1: a module
// whose name needs quoting, in which aten::zeros makes 2 KiB never freed.
TraceModel csv_model() {
  test::ModelBuilder builder;
  builder.module(1000, 9000, "nn.Module: Net");
  builder.module(1500, 5000, "nn.Module: Linear");
  builder.range(1600, 4500, "aten::linear");
  builder.module(6900, 7100, "nn.Module: Sibling");  // on track 0, around track 1's allocation
  builder.module(500, 9500, "nn.Module: Other, \"quoted\"", 1);
  TraceModel model = builder.model();
  model.unix_offset_ns = kOffset;
  const StringId empty = add_string(model, "aten::empty");
  const StringId ones = add_string(model, "aten::ones");
  const StringId zeros = add_string(model, "aten::zeros");

  MemoryEvents& e = model.memory.events;
  e.storages = {{1, 0x1000, kCpu, kMiB}, {2, 0x3000, kCpu, 2048}};
  e.nodes.push_back({2500, false, {},
                     {add_allocation(e, allocator_event(2500, 0x1000, kMiB, kCpu, 0, kMiB, 2 * kMiB, empty)),
                      add_allocation(e, allocator_event(4000, 0x1000, -kMiB, kCpu, 0, 0, 2 * kMiB, empty))}});
  e.nodes.push_back({6000, false, {},
                     {add_allocation(e, allocator_event(6000, 0x2000, kMiB / 2, kCuda0, -1, kMiB / 2, 2 * kMiB, ones))}});
  e.nodes.push_back({7000, false, {},
                     {add_allocation(e, allocator_event(7000, 0x3000, 2048, kCpu, 1, kMiB + 2048, 4 * kMiB, zeros))}});
  model.memory.allocation_track = {0, 0, 0, 1};
  return model;
}

TEST(MemoryExports, MemoryRecordCsvHasTheAllocatorTotalsAfterEachEvent) {
  const TraceModel model = csv_model();
  test::TempDir dir;
  write_memory_record_csv(model, dir.file("memory_record.csv"));
  EXPECT_EQ(test::read_file(dir.file("memory_record.csv")),
            "Component,Timestamp(us),Total Allocated(MiB),Total Reserved(MiB),Device Type\n"
            "PyTorch,1002.500,1.000000,2.000000,CPU\n"
            "PyTorch,1004.000,0.000000,2.000000,CPU\n"
            "PyTorch,1006.000,0.500000,2.000000,CUDA:0\n"
            "PyTorch,1007.000,1.001953,4.000000,CPU\n");
}

TEST(MemoryExports, OperatorMemoryCsvHasOneRowPerAllocation) {
  const TraceModel model = csv_model();
  const memory::MemoryProfile profile = memory::categorize(model.memory.events);
  test::TempDir dir;
  write_operator_memory_csv(model, profile, dir.file("operator_memory.csv"));
  EXPECT_EQ(test::read_file(dir.file("operator_memory.csv")),
            "Name,Module,Category,Size(KiB),Allocation Time(us),Release Time(us),Duration(us),"
            "Allocation Total Allocated(MiB),Allocation Total Reserved(MiB),Release Total Allocated(MiB),"
            "Release Total Reserved(MiB),Device Type\n"
            "aten::empty,Linear,TEMPORARY,1024.000,1002.500,1004.000,1.500,1.000000,2.000000,0.000000,2.000000,CPU\n"
            "aten::ones,Net,UNKNOWN,512.000,1006.000,,,0.500000,2.000000,,,CUDA:0\n"
            "aten::zeros,\"Other, \"\"quoted\"\"\",UNKNOWN,2.000,1007.000,,,1.001953,4.000000,,,CPU\n");
}

}  // namespace
}  // namespace perfprof
