// Memory events around the categorizer: the timeline built from a profile (Unix microseconds,
// one point per microsecond, one device, allocator maxima), the devices offered, observed roles
// matched to storages, the profiling window and batches appended from separate reads.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "memory/categorizer.h"
#include "memory/category.h"
#include "memory/memory_events.h"
#include "memory/timeline.h"
#include "memory_builder.h"

namespace perfprof::memory {

// Category names in failure messages (found by argument-dependent lookup).
[[maybe_unused]] static void PrintTo(Category category, std::ostream* os) { *os << category_name(category); }

namespace {

constexpr Device kCpu{};
constexpr Device kCuda0{DeviceType::kCuda, 0};
constexpr Device kCuda1{DeviceType::kCuda, 1};

int32_t add_storage(MemoryEvents& events, int64_t tensor_id, uint64_t ptr, int64_t bytes, Device device = kCpu) {
  events.storages.push_back({tensor_id, ptr, device, bytes});
  return static_cast<int32_t>(events.storages.size() - 1);
}

// An allocator event of `storage` at its address: allocating its bytes, or freeing them.
uint32_t storage_event(MemoryEvents& events, int64_t time_ns, int32_t storage, bool free = false) {
  const Storage& s = events.storages[storage];
  return test::add_allocation(events, test::allocator_event(time_ns, s.ptr, free ? -s.bytes : s.bytes, s.device, storage));
}

void add_node(MemoryEvents& events, int64_t time_ns, std::vector<uint32_t> allocations,
              std::vector<NodeInput> inputs = {}) {
  events.nodes.push_back({time_ns, false, std::move(inputs), std::move(allocations)});
}

// An allocator event without tensor identity, outside any operator (a node of its own).
void add_anonymous(MemoryEvents& events, int64_t time_ns, uint64_t ptr, int64_t bytes, Device device = kCpu,
                   int64_t total_allocated = 0, int64_t total_reserved = 0) {
  add_node(events, time_ns,
           {test::add_allocation(events, test::allocator_event(time_ns, ptr, bytes, device, -1, total_allocated,
                                                               total_reserved))});
}

std::vector<int64_t> unknown_bytes(const MemoryTimeline& timeline) {
  std::vector<int64_t> bytes;
  for (const CategoryBytes& point : timeline.bytes) bytes.push_back(point[index_of(Category::kUnknown)]);
  return bytes;
}

std::vector<int64_t> allocation_times(const MemoryEvents& events) {
  std::vector<int64_t> times;
  for (const Allocation& a : events.allocations) times.push_back(a.time_ns);
  return times;
}

std::vector<int64_t> node_times(const MemoryEvents& events) {
  std::vector<int64_t> times;
  for (const FlowNode& node : events.nodes) times.push_back(node.time_ns);
  return times;
}

std::vector<std::pair<int32_t, Category>> roles(const MemoryEvents& events) {
  std::vector<std::pair<int32_t, Category>> out;
  for (const KnownRole& role : events.known_roles) out.emplace_back(role.storage, role.category);
  return out;
}

// --- build_timeline and devices_with_memory ------------------------------------------------

TEST(MemoryTimelineBuild, UnixMicrosecondsOnePointPerMicrosecondForOneDevice) {
  constexpr int64_t kOffset = 1'700'000'000'000'000'000;  // ns, a multiple of 1000
  constexpr int64_t kBaseUs = kOffset / 1000;
  MemoryEvents events;
  add_anonymous(events, 1000, 0x100, 100, kCpu, 100, 512);
  add_anonymous(events, 1500, 0x900, 1000, kCuda0, 1000, 2048);
  add_anonymous(events, 1999, 0x200, 50, kCpu, 150, 512);  // the same microsecond as 1000 ns
  add_anonymous(events, 2000, 0x100, -100, kCpu, 50, 1024);
  add_anonymous(events, 3000, 0x900, -1000, kCuda0, 0, 4096);
  add_anonymous(events, 5500, 0x300, 10, kCpu, 60, 1024);
  const MemoryProfile profile = categorize(events);

  const MemoryTimeline cpu = build_timeline(profile, events, kCpu, kOffset);
  EXPECT_EQ(cpu.device, "cpu");
  EXPECT_EQ(cpu.times_us, (std::vector<int64_t>{kBaseUs + 1, kBaseUs + 2, kBaseUs + 5}));
  EXPECT_EQ(unknown_bytes(cpu), (std::vector<int64_t>{150, 50, 60}));  // the last value of each µs
  EXPECT_EQ(cpu.max_allocated, 150);
  EXPECT_EQ(cpu.max_reserved, 1024);

  const MemoryTimeline cuda = build_timeline(profile, events, kCuda0, kOffset);
  EXPECT_EQ(cuda.device, "cuda:0");
  EXPECT_EQ(cuda.times_us, (std::vector<int64_t>{kBaseUs + 1, kBaseUs + 3}));
  EXPECT_EQ(unknown_bytes(cuda), (std::vector<int64_t>{1000, 0}));
  EXPECT_EQ(cuda.max_allocated, 1000);
  EXPECT_EQ(cuda.max_reserved, 4096);

  for (const CategoryBytes& point : cpu.bytes) {
    for (Category other : {Category::kParameter, Category::kInput, Category::kActivation, Category::kGradient}) {
      EXPECT_EQ(point[index_of(other)], 0);
    }
  }
}

TEST(MemoryTimelineBuild, MicrosecondsFollowUnixTimeNotTheClockOfTheEvents) {
  // With an offset of 500 ns, 1000 ns and 1400 ns fall in one Unix microsecond, 1499 and 1500
  // in two.
  MemoryEvents events;
  add_anonymous(events, 1000, 0x100, 1);
  add_anonymous(events, 1400, 0x200, 2);
  add_anonymous(events, 1499, 0x300, 4);
  add_anonymous(events, 1500, 0x400, 8);
  const MemoryTimeline timeline = build_timeline(categorize(events), events, kCpu, 500);
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(unknown_bytes(timeline), (std::vector<int64_t>{7, 15}));
}

TEST(MemoryTimelineBuild, DeviceWithoutEventsHasAnEmptyTimeline) {
  MemoryEvents events;
  add_anonymous(events, 1000, 0x100, 100, kCpu, 100, 100);
  const MemoryTimeline timeline = build_timeline(categorize(events), events, kCuda1, 0);
  EXPECT_EQ(timeline.device, "cuda:1");
  EXPECT_TRUE(timeline.times_us.empty());
  EXPECT_TRUE(timeline.bytes.empty());
  EXPECT_EQ(timeline.max_allocated, 0);
  EXPECT_EQ(timeline.max_reserved, 0);
}

TEST(MemoryTimelineBuild, DevicesWithMemoryListCpuFirstThenByIndex) {
  MemoryEvents events;
  add_anonymous(events, 1000, 0x100, 8, kCuda1);
  add_anonymous(events, 2000, 0x100, 8, kCpu);
  add_anonymous(events, 3000, 0x200, 8, kCuda0);
  add_anonymous(events, 4000, 0x100, -8, kCuda1);
  std::vector<std::string> names;
  for (const Device& device : devices_with_memory(events)) names.push_back(device.name());
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "cuda:0", "cuda:1"}));
  EXPECT_TRUE(devices_with_memory(MemoryEvents{}).empty());
}

// --- add_observed_roles --------------------------------------------------------------------

TEST(MemoryObservedRoles, MatchTheStorageLiveAtTheAddressWhenSeen) {
  constexpr uint64_t kPtr = 0x7000;
  MemoryEvents events;
  const int32_t first = add_storage(events, 10, kPtr, 400);
  const int32_t second = add_storage(events, 11, kPtr, 400);  // the address reused
  add_node(events, 1000, {storage_event(events, 1000, first)});
  add_node(events, 2000, {storage_event(events, 2000, first, true)});
  add_node(events, 3000, {storage_event(events, 3000, second)});

  add_observed_roles(events, {{kPtr, kCpu, 1500, 400, Category::kOptimizerState},
                              {kPtr, kCpu, 3500, 400, Category::kParameter},
                              {kPtr, kCuda0, 1500, 400, Category::kGradient}});  // other device

  ASSERT_EQ(events.storages.size(), 3u);
  EXPECT_EQ(events.storages[2].device, kCuda0);
  EXPECT_EQ(roles(events), (std::vector<std::pair<int32_t, Category>>{
                               {first, Category::kOptimizerState}, {second, Category::kParameter}, {2, Category::kGradient}}));

  const MemoryProfile profile = categorize(events);
  EXPECT_EQ(profile.categories.get(first, 0), Category::kOptimizerState);
  EXPECT_EQ(profile.categories.get(second, 0), Category::kParameter);
}

TEST(MemoryObservedRoles, TensorNoEventMentionsBecomesAPreexistingStorage) {
  MemoryEvents events;
  const int32_t other = add_storage(events, 3, 0x5000, 64, kCuda0);
  add_node(events, 2000, {storage_event(events, 2000, other)});

  add_observed_roles(events, {{0x9000, kCuda0, 1000, 512, Category::kParameter},
                              {0xA000, kCuda0, 1000, 256, Category::kOptimizerState}});

  ASSERT_EQ(events.storages.size(), 3u);
  const Storage& param = events.storages[1];
  const Storage& state = events.storages[2];
  EXPECT_EQ(param.ptr, 0x9000u);
  EXPECT_EQ(param.device, kCuda0);
  EXPECT_EQ(param.bytes, 512);
  EXPECT_EQ(state.bytes, 256);
  // Tensors of their own: a role given to one must not reach the other.
  EXPECT_NE(param.tensor_id, state.tensor_id);
  EXPECT_NE(param.tensor_id, 3);
  EXPECT_NE(state.tensor_id, 3);

  const MemoryProfile profile = categorize(events);
  EXPECT_EQ(profile.categories.get(1, 0), Category::kParameter);
  EXPECT_EQ(profile.categories.get(2, 0), Category::kOptimizerState);
  const MemoryTimeline timeline = build_timeline(profile, events, kCuda0, 0);
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{2}));
  ASSERT_EQ(timeline.bytes.size(), 1u);
  CategoryBytes expected{};
  expected[index_of(Category::kParameter)] = 512;
  expected[index_of(Category::kOptimizerState)] = 256;
  expected[index_of(Category::kUnknown)] = 64;
  EXPECT_EQ(timeline.bytes[0], expected);
}

TEST(MemoryObservedRoles, RepeatedObservationsAddEachRoleOnce) {
  MemoryEvents events;
  const int32_t gradient = add_storage(events, 5, 0x4000, 400);
  add_node(events, 1000, {storage_event(events, 1000, gradient)});
  events.known_roles.push_back({gradient, Category::kGradient});  // from the importer

  add_observed_roles(events, {{0x4000, kCpu, 1500, 400, Category::kGradient},
                              {0x4000, kCpu, 1600, 400, Category::kGradient},
                              {0x9000, kCpu, 1000, 512, Category::kParameter},
                              {0x9000, kCpu, 5000, 512, Category::kParameter},
                              {0x9000, kCpu, 6000, 512, Category::kOptimizerState}});

  EXPECT_EQ(events.storages.size(), 2u);
  EXPECT_EQ(roles(events), (std::vector<std::pair<int32_t, Category>>{{gradient, Category::kGradient},
                                                                      {1, Category::kParameter},
                                                                      {1, Category::kOptimizerState}}));
}

TEST(MemoryObservedRoles, StorageFreedBeforeTheWindowIsNotMatched) {
  // The pipeline of a collection: batches appended as they are imported (Recorder::add_memory),
  // cut to the window, then observed roles matched (TraceBuilder::add_memory).
  constexpr uint64_t kPtr = 0x7000;
  MemoryEvents main_thread;  // optimizer state allocated at 900 ns, read in the window
  const int32_t state = add_storage(main_thread, 1, kPtr, 400);
  add_node(main_thread, 900, {storage_event(main_thread, 900, state)});
  add_node(main_thread, 1500, {}, {{state, Write::kNo}});
  add_anonymous(main_thread, 2000, 0x9000, 1);
  MemoryEvents other_thread;  // earlier, a buffer at the same address, freed at 800 ns
  const int32_t buffer = add_storage(other_thread, 1, kPtr, 64);
  add_node(other_thread, 500, {storage_event(other_thread, 500, buffer)});
  add_node(other_thread, 800, {storage_event(other_thread, 800, buffer, true)});

  MemoryEvents all;
  append_events(all, std::move(main_thread));
  append_events(all, std::move(other_thread));
  ASSERT_EQ(all.storages.size(), 2u);
  // As the trace builder does: roles are matched while every lifetime is known, then the
  // events are cut to the window.
  add_observed_roles(all, {{kPtr, kCpu, 1200, 400, Category::kOptimizerState}});
  MemoryEvents window = restrict_to_window(std::move(all), 1000, 3000);

  EXPECT_EQ(roles(window), (std::vector<std::pair<int32_t, Category>>{{0, Category::kOptimizerState}}));
  const MemoryTimeline timeline = build_timeline(categorize(window), window, kCpu, 0);
  ASSERT_EQ(timeline.bytes.size(), 1u);
  CategoryBytes expected{};
  expected[index_of(Category::kOptimizerState)] = 400;
  expected[index_of(Category::kUnknown)] = 1;
  EXPECT_EQ(timeline.bytes[0], expected);
}

// --- restrict_to_window --------------------------------------------------------------------

TEST(MemoryEventsWindow, DropsEventsOutsideAndRemapsNodeAllocations) {
  MemoryEvents events;
  const int32_t early = add_storage(events, 0, 0x100, 100);
  const int32_t inside = add_storage(events, 1, 0x200, 10);
  const int32_t late = add_storage(events, 2, 0x300, 1000);
  add_node(events, 500, {storage_event(events, 500, early)});
  add_anonymous(events, 1200, 0x900, 1);
  add_node(events, 1400, {storage_event(events, 1500, inside)});
  add_node(events, 2400, {storage_event(events, 2500, early, true)}, {{inside, Write::kNo}});
  add_node(events, 3400, {storage_event(events, 3500, late)});

  const MemoryEvents window = restrict_to_window(events, 1000, 3000);

  EXPECT_EQ(window.storages.size(), 3u);
  EXPECT_EQ(allocation_times(window), (std::vector<int64_t>{1200, 1500, 2500}));
  EXPECT_EQ(node_times(window), (std::vector<int64_t>{1200, 1400, 2400}));
  const std::vector<int32_t> expected_storage = {-1, inside, early};
  for (size_t i = 0; i < window.nodes.size(); ++i) {
    ASSERT_EQ(window.nodes[i].allocations, (std::vector<uint32_t>{static_cast<uint32_t>(i)}));
    EXPECT_EQ(window.allocations[i].storage, expected_storage[i]);
  }
  ASSERT_EQ(window.nodes[2].inputs.size(), 1u);
  EXPECT_EQ(window.nodes[2].inputs[0].storage, inside);

  // The storage allocated before the window and freed inside it was live from the start.
  const MemoryTimeline timeline = build_timeline(categorize(window), window, kCpu, 0);
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(unknown_bytes(timeline), (std::vector<int64_t>{1 + 100 + 10, 1 + 10}));
}

TEST(MemoryEventsWindow, AllocationInsideTheWindowByANodeStartedBeforeItIsCounted) {
  // An operator starting before the window allocates inside it; a later one frees the memory.
  MemoryEvents events;
  const int32_t storage = add_storage(events, 0, 0x100, 64);
  add_node(events, 900, {storage_event(events, 1100, storage)});
  add_node(events, 2500, {storage_event(events, 2600, storage, true)}, {{storage, Write::kNo}});

  const MemoryEvents window = restrict_to_window(events, 1000, 3000);
  ASSERT_EQ(allocation_times(window), (std::vector<int64_t>{1100, 2600}));

  const MemoryTimeline timeline = build_timeline(categorize(window), window, kCpu, 0);
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(unknown_bytes(timeline), (std::vector<int64_t>{64, 0}));
}

TEST(MemoryEventsWindow, RolesOfStoragesNotLiveInTheWindowAreDropped) {
  // A gradient of a warm-up step (freed before the window), today's gradient, a parameter
  // allocated before the window and one allocated after it; the hooks saw all four.
  MemoryEvents events;
  const int32_t old_gradient = add_storage(events, 0, 0x100, 400);
  const int32_t gradient = add_storage(events, 1, 0x100, 400);
  const int32_t parameter = add_storage(events, 2, 0x200, 64);
  const int32_t late = add_storage(events, 3, 0x300, 8);
  add_node(events, 100, {storage_event(events, 100, parameter)});
  add_node(events, 200, {storage_event(events, 200, old_gradient)});
  add_node(events, 900, {storage_event(events, 900, old_gradient, true)});
  add_node(events, 1500, {storage_event(events, 1500, gradient)});
  add_node(events, 3500, {storage_event(events, 3500, late)});
  add_observed_roles(events, {{0x100, kCpu, 500, 400, Category::kGradient},
                              {0x100, kCpu, 1600, 400, Category::kGradient},
                              {0x200, kCpu, 500, 64, Category::kParameter},
                              {0x300, kCpu, 3600, 8, Category::kParameter}});
  ASSERT_EQ(events.known_roles.size(), 4u);

  const MemoryEvents window = restrict_to_window(std::move(events), 1000, 3000);

  EXPECT_EQ(roles(window), (std::vector<std::pair<int32_t, Category>>{{gradient, Category::kGradient},
                                                                      {parameter, Category::kParameter}}));
  const MemoryTimeline timeline = build_timeline(categorize(window), window, kCpu, 0);
  ASSERT_EQ(timeline.bytes.size(), 1u);
  CategoryBytes expected{};
  expected[index_of(Category::kGradient)] = 400;  // one step's gradient, not two
  expected[index_of(Category::kParameter)] = 64;
  EXPECT_EQ(timeline.bytes[0], expected);
}

// --- append_events -------------------------------------------------------------------------

TEST(MemoryEventsAppend, KeepsIndexesTimeOrderAndTensorsOfBatchesApart) {
  MemoryEvents first;
  const int32_t a0 = add_storage(first, 0, 0x100, 8);
  const int32_t a1 = add_storage(first, 1, 0x200, 16);
  add_node(first, 100, {storage_event(first, 100, a0)});
  add_node(first, 300, {storage_event(first, 300, a1)}, {{a0, Write::kNo}});
  first.known_roles.push_back({a1, Category::kParameter});

  MemoryEvents second;  // read separately: its tensor ids 0 and 1 are other tensors
  const int32_t b0 = add_storage(second, 0, 0x300, 32);
  const int32_t b1 = add_storage(second, 1, 0x400, 64);
  add_node(second, 200, {storage_event(second, 200, b0)});
  add_anonymous(second, 250, 0x900, 4);
  add_node(second, 400, {storage_event(second, 400, b1)}, {{b0, Write::kYes}});
  second.known_roles.push_back({b0, Category::kGradient});

  append_events(first, std::move(second));

  ASSERT_EQ(first.storages.size(), 4u);
  std::vector<int64_t> tensor_ids;
  for (const Storage& s : first.storages) tensor_ids.push_back(s.tensor_id);
  EXPECT_EQ(tensor_ids, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(first.storages[2].ptr, 0x300u);

  EXPECT_EQ(allocation_times(first), (std::vector<int64_t>{100, 200, 250, 300, 400}));
  std::vector<int32_t> storages;
  for (const Allocation& a : first.allocations) storages.push_back(a.storage);
  EXPECT_EQ(storages, (std::vector<int32_t>{0, 2, -1, 1, 3}));

  EXPECT_EQ(node_times(first), (std::vector<int64_t>{100, 200, 250, 300, 400}));
  for (const FlowNode& node : first.nodes) {
    ASSERT_EQ(node.allocations.size(), 1u);
    EXPECT_EQ(first.allocations[node.allocations[0]].time_ns, node.time_ns);
  }
  ASSERT_EQ(first.nodes[3].inputs.size(), 1u);
  EXPECT_EQ(first.nodes[3].inputs[0].storage, 0);
  ASSERT_EQ(first.nodes[4].inputs.size(), 1u);
  EXPECT_EQ(first.nodes[4].inputs[0].storage, 2);
  EXPECT_EQ(first.nodes[4].inputs[0].write, Write::kYes);

  EXPECT_EQ(roles(first), (std::vector<std::pair<int32_t, Category>>{{1, Category::kParameter}, {2, Category::kGradient}}));
  const MemoryProfile profile = categorize(first);
  EXPECT_NE(profile.categories.tensor_of(0), profile.categories.tensor_of(2));
  EXPECT_NE(profile.categories.tensor_of(1), profile.categories.tensor_of(3));
  EXPECT_EQ(profile.categories.get(1, 0), Category::kParameter);
  EXPECT_EQ(profile.categories.get(3, 0), std::nullopt);  // tensor 1 of the second batch
}

TEST(MemoryEventsAppend, IntoNothingTakesTheBatchAsItIs) {
  MemoryEvents batch;
  const int32_t s0 = add_storage(batch, 7, 0x100, 8);
  add_node(batch, 100, {storage_event(batch, 100, s0)});
  batch.known_roles.push_back({s0, Category::kGradient});

  MemoryEvents all;
  append_events(all, batch);
  ASSERT_EQ(all.storages.size(), 1u);
  EXPECT_EQ(all.storages[0].tensor_id, 7);
  EXPECT_EQ(allocation_times(all), (std::vector<int64_t>{100}));
  EXPECT_EQ(roles(all), (std::vector<std::pair<int32_t, Category>>{{0, Category::kGradient}}));
}

}  // namespace
}  // namespace perfprof::memory
