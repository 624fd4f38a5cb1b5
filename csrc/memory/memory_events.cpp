#include "memory/memory_events.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace perfprof::memory {
namespace {

// When each storage was live: from its allocation (or before the window) until its free (or after).
struct Lifetime {
  int64_t begin_ns = std::numeric_limits<int64_t>::min();
  int64_t end_ns = std::numeric_limits<int64_t>::max();
  int32_t storage = 0;
};

std::map<Address, std::vector<Lifetime>> lifetimes_by_address(const MemoryEvents& events) {
  std::vector<Lifetime> lifetimes(events.storages.size());
  for (size_t i = 0; i < lifetimes.size(); ++i) lifetimes[i].storage = static_cast<int32_t>(i);
  for (const Allocation& allocation : events.allocations) {
    if (allocation.storage < 0) continue;
    Lifetime& lifetime = lifetimes[allocation.storage];
    (allocation.bytes > 0 ? lifetime.begin_ns : lifetime.end_ns) = allocation.time_ns;
  }
  std::map<Address, std::vector<Lifetime>> by_address;
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    by_address[address_of(events.storages[i].ptr, events.storages[i].device)].push_back(lifetimes[i]);
  }
  return by_address;
}

// The storage live at `time_ns` (the latest allocated, if a free went unreported), or -1.
int32_t storage_live_at(const std::vector<Lifetime>& candidates, int64_t time_ns) {
  int32_t found = -1;
  int64_t latest_begin = std::numeric_limits<int64_t>::min();
  for (const Lifetime& lifetime : candidates) {
    if (lifetime.begin_ns <= time_ns && time_ns <= lifetime.end_ns && (found < 0 || lifetime.begin_ns >= latest_begin)) {
      found = lifetime.storage;
      latest_begin = lifetime.begin_ns;
    }
  }
  return found;
}

// Roles of storages that were not live in [begin_ns, end_ns]: freed before it (a gradient of a
// warm-up step) or allocated after it. Kept, such a storage would count as live before the
// window and never freed, since the cut leaves it no event.
void drop_roles_outside(MemoryEvents& events, int64_t begin_ns, int64_t end_ns) {
  std::vector<bool> outside(events.storages.size(), false);
  for (const Allocation& allocation : events.allocations) {
    if (allocation.storage < 0) continue;
    if (allocation.bytes > 0 ? allocation.time_ns > end_ns : allocation.time_ns < begin_ns) {
      outside[allocation.storage] = true;
    }
  }
  std::vector<KnownRole>& roles = events.known_roles;
  roles.erase(std::remove_if(roles.begin(), roles.end(), [&](const KnownRole& role) { return outside[role.storage]; }),
              roles.end());
}

int64_t unused_tensor_id(const MemoryEvents& events) {
  int64_t lowest = 0;
  for (const Storage& storage : events.storages) lowest = std::min(lowest, storage.tensor_id);
  return lowest - 1;
}

}  // namespace

std::string Device::name() const {
  if (type == DeviceType::kCpu) return "cpu";
  return index < 0 ? "cuda" : "cuda:" + std::to_string(index);
}

void add_observed_roles(MemoryEvents& events, const std::vector<ObservedTensor>& observed) {
  std::map<Address, std::vector<Lifetime>> by_address = lifetimes_by_address(events);
  std::set<std::pair<int32_t, Category>> known;
  for (const KnownRole& role : events.known_roles) known.emplace(role.storage, role.category);
  int64_t next_tensor_id = unused_tensor_id(events);
  for (const ObservedTensor& tensor : observed) {
    std::vector<Lifetime>& candidates = by_address[address_of(tensor.ptr, tensor.device)];
    int32_t storage = storage_live_at(candidates, tensor.time_ns);
    if (storage < 0) {
      storage = static_cast<int32_t>(events.storages.size());
      events.storages.push_back({next_tensor_id--, tensor.ptr, tensor.device, tensor.bytes});
      candidates.push_back({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), storage});
    }
    if (known.emplace(storage, tensor.category).second) events.known_roles.push_back({storage, tensor.category});
  }
}

void sort_by_time(MemoryEvents& events) {
  std::vector<uint32_t> order(events.allocations.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return events.allocations[a].time_ns < events.allocations[b].time_ns;
  });
  std::vector<uint32_t> position(order.size());
  std::vector<Allocation> sorted;
  sorted.reserve(order.size());
  for (uint32_t index : order) {
    position[index] = static_cast<uint32_t>(sorted.size());
    sorted.push_back(events.allocations[index]);
  }
  events.allocations = std::move(sorted);
  for (FlowNode& node : events.nodes) {
    for (uint32_t& index : node.allocations) index = position[index];
  }
  std::stable_sort(events.nodes.begin(), events.nodes.end(),
                   [](const FlowNode& a, const FlowNode& b) { return a.time_ns < b.time_ns; });
}

void append_events(MemoryEvents& events, MemoryEvents more) {
  if (events.empty() && events.storages.empty()) {
    events = std::move(more);
    return;
  }
  const auto storage_offset = static_cast<int32_t>(events.storages.size());
  const auto allocation_offset = static_cast<uint32_t>(events.allocations.size());
  int64_t tensor_offset = 0;  // tensor ids of separate reads are unrelated: keep them apart
  for (const Storage& storage : events.storages) tensor_offset = std::max(tensor_offset, storage.tensor_id + 1);
  for (Storage& storage : more.storages) {
    if (storage.tensor_id >= 0) storage.tensor_id += tensor_offset;
    events.storages.push_back(storage);
  }
  for (Allocation& allocation : more.allocations) {
    if (allocation.storage >= 0) allocation.storage += storage_offset;
    events.allocations.push_back(allocation);
  }
  for (FlowNode& node : more.nodes) {
    for (NodeInput& input : node.inputs) input.storage += storage_offset;
    for (uint32_t& index : node.allocations) index += allocation_offset;
    events.nodes.push_back(std::move(node));
  }
  for (KnownRole role : more.known_roles) {
    role.storage += storage_offset;
    events.known_roles.push_back(role);
  }
  sort_by_time(events);
}

MemoryEvents restrict_to_window(MemoryEvents events, int64_t begin_ns, int64_t end_ns) {
  const auto inside = [&](int64_t time_ns) { return begin_ns <= time_ns && time_ns <= end_ns; };
  drop_roles_outside(events, begin_ns, end_ns);
  std::vector<int64_t> position(events.allocations.size(), -1);
  std::vector<Allocation> kept;
  for (size_t i = 0; i < events.allocations.size(); ++i) {
    if (!inside(events.allocations[i].time_ns)) continue;
    position[i] = static_cast<int64_t>(kept.size());
    kept.push_back(events.allocations[i]);
  }
  std::vector<FlowNode> nodes;
  for (FlowNode& node : events.nodes) {
    std::vector<uint32_t> allocations;
    for (uint32_t index : node.allocations) {
      if (position[index] >= 0) allocations.push_back(static_cast<uint32_t>(position[index]));
    }
    if (inside(node.time_ns)) {
      node.allocations = std::move(allocations);
      nodes.push_back(std::move(node));
      continue;
    }
    // An operator that began before the window: what it allocated or freed inside still counts,
    // as events of their own.
    for (uint32_t index : allocations) nodes.push_back({kept[index].time_ns, node.in_backward, {}, {index}});
  }
  events.allocations = std::move(kept);
  events.nodes = std::move(nodes);
  std::stable_sort(events.nodes.begin(), events.nodes.end(),
                   [](const FlowNode& a, const FlowNode& b) { return a.time_ns < b.time_ns; });
  return events;
}

}  // namespace perfprof::memory
