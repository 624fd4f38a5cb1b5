// Memory categories on hand-built event streams, one rule per test: what each storage version is
// called (PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL or
// none, shown as UNKNOWN) and the bytes per category the timeline shows. The expectations are
// torch.profiler's (_memory_profiler.py: MemoryProfile and MemoryProfileTimeline) on the same
// data flow.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "memory/categorizer.h"
#include "memory/category.h"
#include "memory/memory_events.h"
#include "memory/timeline.h"
#include "memory_builder.h"

namespace perfprof::memory {
namespace {

constexpr Device kCpu{};
constexpr Device kCuda0{DeviceType::kCuda, 0};

// Builds MemoryEvents the way the torch importer lays them out: allocator events in time order,
// each inside the flow node (top-level operator) that made or freed it.
class EventsBuilder {
 public:
  class Node {
   public:
    Node(EventsBuilder& builder, size_t index) : builder_(builder), index_(index) {}

    Node& reads(int32_t storage, Write write = Write::kNo) {
      flow().inputs.push_back({storage, write});
      return *this;
    }
    Node& writes(int32_t storage) { return reads(storage, Write::kYes); }
    Node& allocates(int32_t storage, int64_t time_ns) {
      const Storage& s = builder_.events_.storages[storage];
      return add(builder_.allocation(time_ns, s.ptr, s.bytes, s.device, storage));
    }
    Node& frees(int32_t storage, int64_t time_ns) {
      const Storage& s = builder_.events_.storages[storage];
      return add(builder_.allocation(time_ns, s.ptr, -s.bytes, s.device, storage));
    }

   private:
    FlowNode& flow() { return builder_.events_.nodes[index_]; }
    Node& add(uint32_t allocation) {
      flow().allocations.push_back(allocation);
      return *this;
    }

    EventsBuilder& builder_;
    size_t index_;
  };

  // A storage of tensor `tensor_id`, `bytes` long, at an address of its own.
  int32_t storage(int64_t tensor_id, int64_t bytes, Device device = kCpu) {
    next_ptr_ += 0x1000;
    events_.storages.push_back({tensor_id, next_ptr_, device, bytes});
    return static_cast<int32_t>(events_.storages.size() - 1);
  }

  Node node(int64_t time_ns, bool in_backward = false) {
    events_.nodes.push_back({time_ns, in_backward, {}, {}});
    return Node(*this, events_.nodes.size() - 1);
  }
  Node backward_node(int64_t time_ns) { return node(time_ns, true); }
  // A node added earlier, by the order of the calls that added them.
  Node node_at(size_t index) { return Node(*this, index); }

  // An allocator event without tensor identity, as its own node (outside any operator).
  void anonymous(int64_t time_ns, uint64_t ptr, int64_t bytes, Device device = kCpu) {
    const uint32_t index = allocation(time_ns, ptr, bytes, device, -1);
    events_.nodes.push_back({time_ns, false, {}, {index}});
  }

  void role(int32_t storage, Category category) { events_.known_roles.push_back({storage, category}); }

  // The events in time order, as the importer hands them over.
  MemoryEvents events() const {
    MemoryEvents sorted = events_;
    sort_by_time(sorted);
    return sorted;
  }
  MemoryEvents& mutable_events() { return events_; }

 private:
  uint32_t allocation(int64_t time_ns, uint64_t ptr, int64_t bytes, Device device, int32_t storage) {
    int64_t& total = allocated_[device.type == DeviceType::kCpu ? 0 : 1];
    total += bytes;
    return test::add_allocation(events_, test::allocator_event(time_ns, ptr, bytes, device, storage, total, total));
  }

  MemoryEvents events_;
  uint64_t next_ptr_ = 0x10000;
  int64_t allocated_[2] = {0, 0};
};

// The category name of one storage version, or "none" when no rule gave it one.
std::string category_of(const MemoryProfile& profile, int32_t storage, int32_t version) {
  const std::optional<Category> category = profile.categories.get(storage, version);
  return category ? std::string(category_name(*category)) : "none";
}

CategoryBytes bytes_of(std::initializer_list<std::pair<Category, int64_t>> entries) {
  CategoryBytes bytes{};
  for (const auto& [category, value] : entries) bytes[index_of(category)] = value;
  return bytes;
}

MemoryTimeline cpu_timeline(const MemoryProfile& profile, const MemoryEvents& events) {
  return build_timeline(profile, events, kCpu, 0);
}

// Times (ns) of the INCREMENT_VERSION changes on `device`.
std::vector<int64_t> increment_times(const MemoryProfile& profile, Device device = kCpu) {
  std::vector<int64_t> times;
  for (const CategoryChange& change : profile.changes) {
    if (change.action == Action::kIncrementVersion && change.device == device) times.push_back(change.time_ns);
  }
  return times;
}

// A forward pass: a batch X made by an operator, then Y = mm(X, W) with W already in memory.
struct Forward {
  EventsBuilder b;
  int32_t weight = b.storage(1, 400);
  int32_t batch = b.storage(2, 100);
  int32_t activation = b.storage(3, 200);

  Forward() {
    b.node(1000).allocates(batch, 1000);                                  // aten::rand
    b.node(2000).reads(batch).reads(weight).allocates(activation, 2100);  // aten::mm
  }
};

// Forward, then a backward node making W's gradient G from Y and X and freeing Y, then an
// optimizer step reading G and updating W in place. Only G's role is known.
struct TrainingStep : Forward {
  int32_t gradient = b.storage(5, 400);

  TrainingStep() {
    b.backward_node(3000).reads(activation).reads(batch).allocates(gradient, 3100).frees(activation, 3200);
    b.node(4000).reads(gradient).writes(weight);  // aten::add_(W, G)
    b.role(gradient, Category::kGradient);
  }
};

// --- 1. PARAMETER from a known role ---------------------------------------------------------

TEST(MemoryCategories, KnownParameterIsPreexistingFromTheFirstPoint) {
  Forward f;
  f.b.role(f.weight, Category::kParameter);
  const MemoryProfile profile = categorize(f.b.events());

  EXPECT_EQ(category_of(profile, f.weight, 0), "PARAMETER");
  EXPECT_EQ(category_of(profile, f.batch, 0), "INPUT");
  EXPECT_EQ(category_of(profile, f.activation, 0), "ACTIVATION");

  ASSERT_FALSE(profile.changes.empty());
  EXPECT_EQ(profile.changes.front().action, Action::kPreexisting);
  EXPECT_EQ(profile.changes.front().time_ns, kPreexistingTime);
  EXPECT_EQ(profile.changes.front().category, Category::kParameter);
  EXPECT_EQ(profile.changes.front().bytes, 400);

  const MemoryTimeline timeline = cpu_timeline(profile, f.b.events());
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(timeline.bytes.size(), 2u);
  EXPECT_EQ(timeline.bytes[0], bytes_of({{Category::kParameter, 400}, {Category::kInput, 100}}));
  EXPECT_EQ(timeline.bytes[1],
            bytes_of({{Category::kParameter, 400}, {Category::kInput, 100}, {Category::kActivation, 200}}));
}

// --- 2. PARAMETER inferred from data flow ---------------------------------------------------

TEST(MemoryCategories, ParameterInferredFromDataFlowWithoutKnownRole) {
  TrainingStep s;
  // A momentum buffer: takes the gradient and is updated in place, but the forward pass never
  // reads it, so it is no parameter.
  const int32_t buffer = s.b.storage(6, 400);
  s.b.node(4500).reads(s.gradient).writes(buffer);
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, s.weight, 0), "PARAMETER");
  EXPECT_EQ(category_of(profile, s.weight, 1), "PARAMETER");
  EXPECT_EQ(category_of(profile, s.batch, 0), "INPUT");
  EXPECT_EQ(category_of(profile, s.activation, 0), "ACTIVATION");
  EXPECT_EQ(category_of(profile, s.gradient, 0), "GRADIENT");
  EXPECT_EQ(category_of(profile, buffer, 0), "none");
  EXPECT_EQ(category_of(profile, buffer, 1), "none");

  // W counted as a parameter from the start, across its in-place update at 4 µs.
  const MemoryTimeline timeline = cpu_timeline(profile, s.b.events());
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(timeline.bytes.size(), 4u);
  EXPECT_EQ(timeline.bytes[0], bytes_of({{Category::kParameter, 400}, {Category::kInput, 100}, {Category::kUnknown, 400}}));
  EXPECT_EQ(timeline.bytes[2], bytes_of({{Category::kParameter, 400},
                                         {Category::kInput, 100},
                                         {Category::kGradient, 400},
                                         {Category::kUnknown, 400}}));
  EXPECT_EQ(timeline.bytes[3], timeline.bytes[2]);
}

TEST(MemoryCategories, NoParameterInferredWithoutAGradient) {
  TrainingStep s;
  s.b.mutable_events().known_roles.clear();
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, s.weight, 0), "none");
  EXPECT_EQ(category_of(profile, s.batch, 0), "none");
  EXPECT_EQ(category_of(profile, s.activation, 0), "none");
}

// --- 3. GRADIENT from a known role ----------------------------------------------------------

TEST(MemoryCategories, KnownGradientCoversEveryStorageAndVersionOfItsTensor) {
  EventsBuilder b;
  const int32_t first = b.storage(5, 400);
  const int32_t second = b.storage(5, 400);  // the same .grad tensor, its data replaced
  b.backward_node(1000).allocates(first, 1100);
  b.node(2000).writes(first);  // zero_()
  b.backward_node(3000).allocates(second, 3100);
  b.node(4000).frees(first, 4100);
  b.role(first, Category::kGradient);
  const MemoryProfile profile = categorize(b.events());

  EXPECT_EQ(category_of(profile, first, 0), "GRADIENT");
  EXPECT_EQ(category_of(profile, first, 1), "GRADIENT");
  EXPECT_EQ(category_of(profile, second, 0), "GRADIENT");

  const MemoryTimeline timeline = cpu_timeline(profile, b.events());
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(timeline.bytes.size(), 4u);
  EXPECT_EQ(timeline.bytes[1], bytes_of({{Category::kGradient, 400}}));
  EXPECT_EQ(timeline.bytes[2], bytes_of({{Category::kGradient, 800}}));
  EXPECT_EQ(timeline.bytes[3], bytes_of({{Category::kGradient, 400}}));
}

// --- 4. OPTIMIZER_STATE from a known role ---------------------------------------------------

TEST(MemoryCategories, KnownOptimizerStateAllocatedInTheOptimizerStep) {
  TrainingStep s;
  const int32_t exp_avg = s.b.storage(7, 400);
  s.b.node(5000).reads(s.gradient).writes(s.weight).allocates(exp_avg, 5100).writes(exp_avg);

  // Data flow alone gives the state no category (its producer reads a gradient).
  EXPECT_EQ(category_of(categorize(s.b.events()), exp_avg, 0), "none");

  s.b.role(exp_avg, Category::kOptimizerState);
  const MemoryProfile profile = categorize(s.b.events());
  EXPECT_EQ(category_of(profile, exp_avg, 0), "OPTIMIZER_STATE");
  EXPECT_EQ(category_of(profile, s.weight, 0), "PARAMETER");

  const MemoryTimeline timeline = cpu_timeline(profile, s.b.events());
  ASSERT_FALSE(timeline.times_us.empty());
  EXPECT_EQ(timeline.times_us.back(), 5);
  EXPECT_EQ(timeline.bytes.back(), bytes_of({{Category::kParameter, 400},
                                             {Category::kOptimizerState, 400},
                                             {Category::kInput, 100},
                                             {Category::kGradient, 400}}));
}

// --- 5. INPUT ------------------------------------------------------------------------------

TEST(MemoryCategories, InputsFeedTheModelWithoutDependingOnGradients) {
  TrainingStep s;
  // A label made by an operator and read by the loss together with the activation; the
  // backward pass starts from the loss.
  const int32_t label = s.b.storage(8, 16);
  const int32_t loss = s.b.storage(9, 4);
  s.b.node(2500).allocates(label, 2500);
  s.b.node(2700).reads(s.activation).reads(label).allocates(loss, 2750);
  s.b.node_at(2).reads(loss);  // the backward node starts from the loss
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, s.batch, 0), "INPUT");
  EXPECT_EQ(category_of(profile, label, 0), "INPUT");
  EXPECT_EQ(category_of(profile, s.activation, 0), "ACTIVATION");  // depends on W
  EXPECT_EQ(category_of(profile, loss, 0), "ACTIVATION");
}

TEST(MemoryCategories, AllocationOutsideEveryNodeIsMadeFromNothing) {
  // Keys computed from the activation are concatenated to an empty cache: an operator whose
  // inputs no schema accepts (aten::cat of a list holding a tensor without storage) is no node,
  // so its allocation is a node of its own that reads nothing, and the operators it calls are
  // nodes (aten::narrow reads the new storage). Attention reads the activation and the cache.
  TrainingStep s;
  s.b.role(s.weight, Category::kParameter);
  const int32_t cache = s.b.storage(12, 200);
  const int32_t scores = s.b.storage(13, 50);
  s.b.node(2200).allocates(cache, 2200);
  s.b.node(2250).reads(cache);
  s.b.node(2300).reads(s.activation).reads(cache).allocates(scores, 2350);
  s.b.node_at(2).reads(scores);  // the backward pass starts from the scores
  // The same concatenation as a node (a schema accepted its inputs) reads the activation.
  const int32_t cache_from_node = s.b.storage(14, 200);
  s.b.node(2400).reads(s.activation).allocates(cache_from_node, 2400);
  s.b.node(2500).reads(cache_from_node).reads(scores);
  s.b.node_at(2).reads(cache_from_node);
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, cache, 0), "INPUT");  // as torch.profiler calls GPT-2's key/value cache
  EXPECT_EQ(category_of(profile, cache_from_node, 0), "ACTIVATION");
  EXPECT_EQ(category_of(profile, scores, 0), "ACTIVATION");
}

TEST(MemoryCategories, TensorsMadeByTheBackwardPassAreNoInputs) {
  TrainingStep s;
  // Made from the batch alone and feeding W's gradient: an input, had a forward op made it.
  const int32_t made_in_backward = s.b.storage(8, 16);
  s.b.backward_node(2900).reads(s.batch).allocates(made_in_backward, 2900);
  s.b.node_at(2).reads(made_in_backward);
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, s.batch, 0), "INPUT");
  EXPECT_EQ(category_of(profile, made_in_backward, 0), "AUTOGRAD_DETAIL");
}

// --- 6. TEMPORARY --------------------------------------------------------------------------

TEST(MemoryCategories, TemporaryIsAllocatedAndFreedInOneNode) {
  EventsBuilder b;
  const int32_t scratch = b.storage(4, 64);
  const int32_t same_tensor_elsewhere = b.storage(4, 64);
  b.node(2000).allocates(scratch, 2100).frees(scratch, 3100);
  b.node(5000).allocates(same_tensor_elsewhere, 5100);
  const MemoryProfile profile = categorize(b.events());

  EXPECT_EQ(category_of(profile, scratch, 0), "TEMPORARY");
  EXPECT_EQ(category_of(profile, same_tensor_elsewhere, 0), "none");  // the rule names a storage

  const MemoryTimeline timeline = cpu_timeline(profile, b.events());
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{2, 3, 5}));
  ASSERT_EQ(timeline.bytes.size(), 3u);
  EXPECT_EQ(timeline.bytes[0], bytes_of({{Category::kTemporary, 64}}));
  EXPECT_EQ(timeline.bytes[1], bytes_of({}));
  EXPECT_EQ(timeline.bytes[2], bytes_of({{Category::kUnknown, 64}}));
}

// --- 7. ACTIVATION -------------------------------------------------------------------------

TEST(MemoryCategories, ActivationIsMadeForwardAndFreedInTheBackwardPass) {
  TrainingStep s;
  s.b.role(s.weight, Category::kParameter);
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, s.activation, 0), "ACTIVATION");

  const MemoryTimeline timeline = cpu_timeline(profile, s.b.events());
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(timeline.bytes.size(), 4u);
  EXPECT_EQ(timeline.bytes[1],
            bytes_of({{Category::kParameter, 400}, {Category::kInput, 100}, {Category::kActivation, 200}}));
  EXPECT_EQ(timeline.bytes[2],
            bytes_of({{Category::kParameter, 400}, {Category::kInput, 100}, {Category::kGradient, 400}}));
}

TEST(MemoryCategories, ActivationNeedsEveryInputCategorized) {
  Forward f;
  f.b.role(f.weight, Category::kParameter);
  const int32_t stranger = f.b.storage(10, 8);  // pre-existing, no category
  const int32_t mixed = f.b.storage(11, 8);
  f.b.node(2500).reads(f.activation).reads(stranger).allocates(mixed, 2500);
  const MemoryProfile profile = categorize(f.b.events());

  EXPECT_EQ(category_of(profile, f.activation, 0), "ACTIVATION");
  EXPECT_EQ(category_of(profile, mixed, 0), "none");
}

// --- 8. AUTOGRAD_DETAIL --------------------------------------------------------------------

TEST(MemoryCategories, AutogradDetailIsWhatTheBackwardPassMakesBesidesGradients) {
  TrainingStep s;
  const int32_t detail = s.b.storage(12, 32);
  s.b.backward_node(3300).reads(s.batch).allocates(detail, 3300);
  s.b.backward_node(3600).writes(detail);                 // updated in place, still detail
  s.b.backward_node(3800).reads(detail).frees(detail, 3900);
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, detail, 0), "AUTOGRAD_DETAIL");
  EXPECT_EQ(category_of(profile, detail, 1), "AUTOGRAD_DETAIL");
  EXPECT_EQ(category_of(profile, s.gradient, 0), "GRADIENT");  // made backward, but known

  const MemoryTimeline timeline = cpu_timeline(profile, s.b.events());
  ASSERT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2, 3, 4}));
  // 3 µs ends with the detail freed: the point holds the last value of the microsecond.
  EXPECT_EQ(timeline.bytes[2][index_of(Category::kAutogradDetail)], 0);
}

TEST(MemoryCategories, AutogradDetailBytesLiveUntilFreed) {
  TrainingStep s;
  const int32_t detail = s.b.storage(12, 32);
  s.b.backward_node(5000).reads(s.gradient).allocates(detail, 5000);
  s.b.backward_node(6000).reads(detail).frees(detail, 6000);
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, detail, 0), "AUTOGRAD_DETAIL");
  const MemoryTimeline timeline = cpu_timeline(profile, s.b.events());
  ASSERT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(timeline.bytes[4][index_of(Category::kAutogradDetail)], 32);
  EXPECT_EQ(timeline.bytes[5][index_of(Category::kAutogradDetail)], 0);
}

// --- 9. UNKNOWN ----------------------------------------------------------------------------

TEST(MemoryCategories, AllocationsWithoutIdentityAreUnknownMatchedByAddress) {
  EventsBuilder b;
  b.anonymous(1000, 0xA000, 64);
  b.anonymous(2000, 0xC000, 16);
  b.anonymous(3000, 0xA000, -64);
  b.anonymous(3500, 0xC000, -16, kCuda0);  // same address, other device: never allocated there
  b.anonymous(4000, 0xC000, 16);           // allocated again without a free seen
  b.anonymous(5000, 0xB000, -32);          // freed, never allocated: live before the window
  const MemoryProfile profile = categorize(b.events());

  for (const CategoryChange& change : profile.changes) EXPECT_EQ(change.category, Category::kUnknown);
  EXPECT_EQ(increment_times(profile), (std::vector<int64_t>{4000, 4000}));

  const MemoryTimeline cpu = cpu_timeline(profile, b.events());
  EXPECT_EQ(cpu.times_us, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  std::vector<int64_t> unknown;
  for (const CategoryBytes& bytes : cpu.bytes) unknown.push_back(bytes[index_of(Category::kUnknown)]);
  EXPECT_EQ(unknown, (std::vector<int64_t>{32 + 64, 32 + 64 + 16, 32 + 16, 32 + 16, 16}));

  const MemoryTimeline cuda = build_timeline(profile, b.events(), kCuda0, 0);
  EXPECT_EQ(cuda.times_us, (std::vector<int64_t>{3}));
  ASSERT_EQ(cuda.bytes.size(), 1u);
  EXPECT_EQ(cuda.bytes[0], bytes_of({}));
}

TEST(MemoryCategories, StorageNoRuleReachesIsUnknown) {
  EventsBuilder b;
  const int32_t lone = b.storage(1, 128);
  b.node(1000).allocates(lone, 1000);
  b.node(2000).reads(lone);
  const MemoryProfile profile = categorize(b.events());

  EXPECT_EQ(category_of(profile, lone, 0), "none");
  const MemoryTimeline timeline = cpu_timeline(profile, b.events());
  ASSERT_EQ(timeline.bytes.size(), 1u);
  EXPECT_EQ(timeline.bytes[0], bytes_of({{Category::kUnknown, 128}}));
}

// --- 10. Versions --------------------------------------------------------------------------

TEST(MemoryCategories, InPlaceWritesMakeVersionsCategorizedOneByOne) {
  Forward f;
  f.b.role(f.weight, Category::kParameter);
  f.b.node(3000).writes(f.activation);           // relu_: still an activation
  f.b.backward_node(4000).writes(f.activation);  // overwritten by the backward pass
  const MemoryProfile profile = categorize(f.b.events());

  EXPECT_EQ(category_of(profile, f.activation, 0), "ACTIVATION");
  EXPECT_EQ(category_of(profile, f.activation, 1), "ACTIVATION");
  EXPECT_EQ(category_of(profile, f.activation, 2), "none");
  EXPECT_EQ(increment_times(profile), (std::vector<int64_t>{3000, 3000, 4000, 4000}));

  const MemoryTimeline timeline = cpu_timeline(profile, f.b.events());
  EXPECT_EQ(timeline.times_us, (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(timeline.bytes.size(), 4u);
  EXPECT_EQ(timeline.bytes[2], timeline.bytes[1]);
  EXPECT_EQ(timeline.bytes[3],
            bytes_of({{Category::kParameter, 400}, {Category::kInput, 100}, {Category::kUnknown, 200}}));
}

TEST(MemoryCategories, UnknownWriteCountsOnlyWhenNoOperatorOfTheNodeKnowsTheSchema) {
  Forward f;
  f.b.role(f.weight, Category::kParameter);
  const int32_t y = f.activation;
  f.b.node(3000).reads(y, Write::kUnknown);                          // a write: v1
  f.b.node(4000).reads(y, Write::kUnknown).reads(y, Write::kNo);     // another op knows: no write
  f.b.node(5000).reads(y, Write::kUnknown).reads(y, Write::kYes);    // a write: v2
  const MemoryProfile profile = categorize(f.b.events());

  EXPECT_EQ(increment_times(profile), (std::vector<int64_t>{3000, 3000, 5000, 5000}));
  EXPECT_EQ(category_of(profile, y, 1), "ACTIVATION");
  EXPECT_EQ(category_of(profile, y, 2), "ACTIVATION");
  EXPECT_EQ(category_of(profile, y, 3), "none");  // no third version
}

// --- 11. The order of the rules ------------------------------------------------------------

TEST(MemoryCategories, KnownOptimizerStateBeatsInferredParameter) {
  TrainingStep s;
  s.b.role(s.weight, Category::kOptimizerState);
  const MemoryProfile profile = categorize(s.b.events());

  EXPECT_EQ(category_of(profile, s.weight, 0), "OPTIMIZER_STATE");
  EXPECT_EQ(category_of(profile, s.weight, 1), "OPTIMIZER_STATE");
  // Activations were flooded while W still counted as a parameter.
  EXPECT_EQ(category_of(profile, s.activation, 0), "ACTIVATION");
}

TEST(MemoryCategories, KnownRolesApplyInRuleOrderNotListOrder) {
  EventsBuilder b;
  const int32_t state = b.storage(1, 8);
  const int32_t param = b.storage(2, 8);
  const int32_t scratch = b.storage(3, 8);
  b.node(1000).reads(state).reads(param).allocates(scratch, 1000).frees(scratch, 1500);
  b.role(state, Category::kOptimizerState);
  b.role(state, Category::kParameter);
  b.role(state, Category::kGradient);
  b.role(param, Category::kParameter);
  b.role(param, Category::kGradient);
  b.role(scratch, Category::kParameter);
  const MemoryProfile profile = categorize(b.events());

  EXPECT_EQ(category_of(profile, state, 0), "OPTIMIZER_STATE");  // gradient, parameter, optimizer
  EXPECT_EQ(category_of(profile, param, 0), "PARAMETER");        // parameter after gradient
  EXPECT_EQ(category_of(profile, scratch, 0), "PARAMETER");      // a tensor role beats TEMPORARY
}

}  // namespace
}  // namespace perfprof::memory
