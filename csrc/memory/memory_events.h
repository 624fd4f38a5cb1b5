#pragma once
// What memory profiling records, in the terms the categorizer reasons with: allocator events,
// the storages they belong to, the operators that read, write, allocate and free them, and the
// identities perfprof saw directly (module parameters, gradients, optimizer state).
//
// A storage is what torch.profiler calls a TensorKey: one allocation of one logical tensor. All
// storages of a tensor share its `tensor_id` (a tensor whose data is replaced keeps its id).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/string_table.h"
#include "memory/category.h"

namespace perfprof::memory {

// c10::DeviceType values, as torch.profiler writes them in "Device Type".
enum class DeviceType : int8_t { kCpu = 0, kCuda = 1 };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int16_t index = -1;  // -1: the CPU

  bool operator==(const Device& other) const { return type == other.type && index == other.index; }
  bool operator!=(const Device& other) const { return !(*this == other); }
  std::string name() const;  // "cpu", "cuda:0"
};

// Where memory lives: data pointer and device, as one comparable key.
using Address = std::pair<uint64_t, int32_t>;
inline Address address_of(uint64_t ptr, Device device) {
  return {ptr, static_cast<int32_t>(device.type) << 16 | static_cast<uint16_t>(device.index)};
}

struct Storage {
  int64_t tensor_id = 0;
  uint64_t ptr = 0;  // data pointer
  Device device;
  int64_t bytes = 0;  // what its tensors span (sizes, strides); an allocation event's size wins
};

// One report from an allocator.
struct Allocation {
  int64_t time_ns = 0;  // now_ns() clock
  uint64_t ptr = 0;
  int64_t bytes = 0;  // > 0 allocated, < 0 freed
  int64_t total_allocated = 0;  // the allocator's totals after this event
  int64_t total_reserved = 0;
  Device device;
  int32_t storage = -1;  // index into MemoryEvents::storages; -1: no tensor identity known
  int64_t os_tid = 0;
  StringId op = kEmptyString;  // innermost operator running, if any
};

// Whether an operator writes an input, from its schema.
enum class Write : uint8_t { kNo, kYes, kUnknown /* no schema of the operator matches */ };

// A tensor one operator of a flow node reads.
struct NodeInput {
  int32_t storage = 0;
  Write write = Write::kNo;
};

// One step of the data flow: a top-level operator with a schema (everything it calls included),
// a backward function, or an allocator event outside any operator.
struct FlowNode {
  int64_t time_ns = 0;
  bool in_backward = false;  // runs under a backward function
  std::vector<NodeInput> inputs;  // of every operator in the node: a storage may appear repeatedly
  std::vector<uint32_t> allocations;  // indexes into MemoryEvents::allocations, made or freed here
};

// A storage whose role perfprof knows without inference; applies to every storage of its tensor.
struct KnownRole {
  int32_t storage = 0;
  Category category = Category::kUnknown;  // kParameter, kGradient or kOptimizerState
};

struct MemoryEvents {
  std::vector<Storage> storages;
  std::vector<Allocation> allocations;  // in time order
  std::vector<FlowNode> nodes;          // in start order
  std::vector<KnownRole> known_roles;   // in the order they were seen

  bool empty() const { return allocations.empty() && nodes.empty(); }
};

// A tensor perfprof saw in a known role (a module's parameter, a gradient, optimizer state).
struct ObservedTensor {
  uint64_t ptr = 0;  // data pointer
  Device device;
  int64_t time_ns = 0;  // when it was seen
  int64_t bytes = 0;    // its storage's size
  Category category = Category::kUnknown;
};

// Adds each observed tensor to events.known_roles (once per storage and role), matched to the
// storage at its address at the time it was seen. A tensor no event mentions becomes a storage
// of its own, live throughout: a parameter the window never touched still takes memory.
void add_observed_roles(MemoryEvents& events, const std::vector<ObservedTensor>& observed);

// Puts allocations and nodes in time order (each stable), keeping nodes' references right.
void sort_by_time(MemoryEvents& events);

// Appends `more` (read separately, e.g. by another thread) to `events`, keeping time order.
void append_events(MemoryEvents& events, MemoryEvents more);

// What falls in [begin_ns, end_ns]: allocator events and nodes outside are dropped (events inside
// the window of a node that began before it become nodes of their own); storages stay (one
// allocated before the window and freed inside was live at its start), but the known roles of
// storages freed before the window or allocated after it go.
MemoryEvents restrict_to_window(MemoryEvents events, int64_t begin_ns, int64_t end_ns);

}  // namespace perfprof::memory
