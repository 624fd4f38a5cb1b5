#include "memory/categorizer.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_set>
#include <utility>

namespace perfprof::memory {
namespace {

// (storage, version) as one hashable value.
using VersionKey = uint64_t;
using VersionSet = std::unordered_set<VersionKey>;

VersionKey version_key(int32_t storage, int32_t version) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(storage)) << 32) | static_cast<uint32_t>(version);
}
int32_t storage_of(VersionKey key) { return static_cast<int32_t>(key >> 32); }
int32_t version_of(VersionKey key) { return static_cast<int32_t>(key & 0xffffffffu); }

// How one flow node touches one storage.
struct Edge {
  static constexpr int32_t kAllocatedHere = -1;

  int32_t storage = 0;
  int32_t input_version = 0;  // the version read, or kAllocatedHere
  bool mutated = false;       // the node writes the version it read, making the next one
  bool deleted = false;       // the node frees the storage

  bool is_allocation() const { return input_version == kAllocatedHere; }
  bool is_input() const { return !is_allocation(); }
  bool is_output() const { return (is_allocation() && !deleted) || mutated; }
  bool is_intermediate() const { return is_allocation() && deleted; }
  int32_t output_version() const { return is_allocation() ? 0 : input_version + 1; }
  VersionKey input_key() const { return version_key(storage, input_version); }
  VersionKey output_key() const { return version_key(storage, output_version()); }
};

struct Node {
  int64_t time_ns = 0;
  bool in_backward = false;
  std::vector<Edge> edges;
};

// Edges of one node as they are gathered: an operator writes a storage if any schema says so,
// or if no schema of any operator reading it is known.
class EdgeBuilder {
 public:
  explicit EdgeBuilder(size_t num_storages) : slot_(num_storages, -1) {}

  Edge& edge(int32_t storage) {
    if (slot_[storage] < 0) {
      slot_[storage] = static_cast<int32_t>(edges_.size());
      edges_.push_back(Edge{storage});
      writes_.push_back({});
    }
    return edges_[slot_[storage]];
  }
  void add_input(int32_t storage, int32_t version, Write write) {
    edge(storage).input_version = version;
    WriteSeen& seen = writes_[slot_[storage]];
    seen.yes |= write == Write::kYes;
    seen.known |= write != Write::kUnknown;
  }
  std::vector<Edge> take() {
    for (size_t i = 0; i < edges_.size(); ++i) {
      if (!edges_[i].deleted) edges_[i].mutated = writes_[i].yes || !writes_[i].known;
      slot_[edges_[i].storage] = -1;
    }
    writes_.clear();
    return std::move(edges_);
  }

 private:
  struct WriteSeen {
    bool yes = false;
    bool known = false;
  };
  std::vector<int32_t> slot_;  // per storage: its edge in the node being built, or -1
  std::vector<Edge> edges_;
  std::vector<WriteSeen> writes_;
};

// Versions advance with every write; a storage first seen as an input is at version 0.
std::vector<Node> build_data_flow(const MemoryEvents& events) {
  std::vector<int32_t> version(events.storages.size(), 0);
  EdgeBuilder builder(events.storages.size());
  std::vector<Node> nodes;
  nodes.reserve(events.nodes.size());
  for (const FlowNode& flow : events.nodes) {
    for (const NodeInput& input : flow.inputs) {
      builder.add_input(input.storage, version[input.storage], input.write);
    }
    for (uint32_t index : flow.allocations) {
      const Allocation& allocation = events.allocations[index];
      if (allocation.storage < 0 || allocation.bytes > 0) continue;
      Edge& edge = builder.edge(allocation.storage);
      edge.deleted = true;
      edge.input_version = version[allocation.storage];
    }
    for (uint32_t index : flow.allocations) {
      const Allocation& allocation = events.allocations[index];
      if (allocation.storage >= 0 && allocation.bytes > 0) {
        builder.edge(allocation.storage).input_version = Edge::kAllocatedHere;
      }
    }
    Node node{flow.time_ns, flow.in_backward, builder.take()};
    for (const Edge& edge : node.edges) {
      if (edge.mutated && edge.is_input()) ++version[edge.storage];
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

bool is_one_of(std::optional<Category> category, std::initializer_list<Category> wanted) {
  return category && std::find(wanted.begin(), wanted.end(), *category) != wanted.end();
}

// The rules, in the order torch.profiler applies them; each later rule only fills what earlier
// ones left open, except where a rule names a whole tensor.
class Categorizer {
 public:
  Categorizer(const MemoryEvents& events, std::vector<Node> nodes, CategoryTable& table)
      : events_(events), nodes_(std::move(nodes)), table_(table) {}

  void run() {
    apply_known_roles(Category::kGradient);
    mark_temporaries();
    apply_known_roles(Category::kParameter);
    mark_inputs();
    mark_parameters_from_data_flow();
    mark_activations();
    apply_known_roles(Category::kOptimizerState);
    mark_autograd_detail();
  }

  // Every (storage, version) the data flow mentions, and every storage of a known tensor.
  VersionSet snapshot() const {
    VersionSet all;
    for (const Node& node : nodes_) {
      for (const Edge& edge : node.edges) {
        if (edge.is_input()) all.insert(edge.input_key());
        if (edge.is_intermediate()) all.insert(version_key(edge.storage, 0));
        if (edge.is_output()) all.insert(edge.output_key());
      }
    }
    for (int32_t storage : table_.storages_set_by_tensor()) all.insert(version_key(storage, 0));
    return all;
  }

  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  std::optional<Category> category(VersionKey key) const { return table_.get(storage_of(key), version_of(key)); }
  bool is_gradient(VersionKey key) const { return category(key) == Category::kGradient; }

  void apply_known_roles(Category role) {
    for (const KnownRole& known : events_.known_roles) {
      if (known.category == role) table_.set_for_tensor(known.storage, role);
    }
  }

  // Allocated and freed by the same operator.
  void mark_temporaries() {
    for (const Node& node : nodes_) {
      for (const Edge& edge : node.edges) {
        if (edge.is_intermediate()) table_.set_for_storage(edge.storage, Category::kTemporary);
      }
    }
  }

  // Per tensor: some version of it is computed from a parameter or gradient, directly or
  // through other such tensors. Information flows backwards too (a parameter's first version
  // is read before its update), so this runs to a fixed point.
  std::vector<bool> tensors_depending_on_gradients() const {
    std::vector<bool> depends(table_.num_tensors(), false);
    bool changed = true;
    while (changed) {
      changed = false;
      for (const Node& node : nodes_) {
        bool any = false;
        for (const Edge& edge : node.edges) {
          if (!edge.is_input()) continue;
          const int32_t tensor = table_.tensor_of(edge.storage);
          if (depends[tensor] || is_one_of(category(edge.input_key()), {Category::kGradient, Category::kParameter})) {
            changed |= !depends[tensor];
            depends[tensor] = true;
            any = true;
          }
        }
        if (!any) continue;
        for (const Edge& edge : node.edges) {
          if (!edge.is_output()) continue;
          const int32_t tensor = table_.tensor_of(edge.storage);
          changed |= !depends[tensor];
          depends[tensor] = true;
        }
      }
    }
    return depends;
  }

  // Inputs feed the computation of a gradient without depending on one, and are not made by
  // the backward pass.
  void mark_inputs() {
    const std::vector<bool> depends = tensors_depending_on_gradients();
    VersionSet produces_gradient;
    for (auto node = nodes_.rbegin(); node != nodes_.rend(); ++node) {
      const bool feeds = std::any_of(node->edges.begin(), node->edges.end(), [&](const Edge& edge) {
        return (edge.is_input() && feeds_gradient(edge.input_key(), produces_gradient)) ||
               (edge.is_output() && feeds_gradient(edge.output_key(), produces_gradient));
      });
      if (!feeds) continue;
      for (const Edge& edge : node->edges) {
        if (edge.is_input()) produces_gradient.insert(edge.input_key());
        if (edge.is_output()) produces_gradient.insert(edge.output_key());
      }
    }
    for (const Node& node : nodes_) {
      if (!node.in_backward) continue;
      for (const Edge& edge : node.edges) {
        if (edge.is_output()) produces_gradient.erase(edge.output_key());
      }
    }
    for (VersionKey key : produces_gradient) {
      if (!depends[table_.tensor_of(storage_of(key))]) {
        table_.set_default_for_version(storage_of(key), version_of(key), Category::kInput);
      }
    }
  }

  bool feeds_gradient(VersionKey key, const VersionSet& produces_gradient) const {
    return is_one_of(category(key), {Category::kGradient, Category::kParameter}) || produces_gradient.count(key) != 0;
  }

  // For code without modules or optimizers perfprof saw: a parameter is read by the forward
  // pass (downstream of an input), contributes to a gradient and depends on one.
  void mark_parameters_from_data_flow() {
    const VersionSet all = snapshot();
    VersionSet forward;
    for (VersionKey key : all) {
      if (category(key) == Category::kInput) forward.insert(key);
    }
    VersionSet candidates;
    for (const Node& node : nodes_) {
      if (node.in_backward || touches_gradient(node) || !reads_any_of(node, forward)) continue;
      for (const Edge& edge : node.edges) {
        if (edge.is_output()) forward.insert(edge.output_key());
      }
      for (const Edge& edge : node.edges) {
        if (edge.is_input() && forward.count(edge.input_key()) == 0) candidates.insert(edge.input_key());
      }
    }
    const VersionSet used = versions_used_for_gradients();
    const std::vector<bool> depends = tensors_depending_on_gradients();
    std::vector<bool> parameter_tensor(table_.num_tensors(), false);
    for (VersionKey key : candidates) {
      const int32_t tensor = table_.tensor_of(storage_of(key));
      if (used.count(key) != 0 && depends[tensor]) parameter_tensor[tensor] = true;
    }
    for (VersionKey key : all) {
      if (parameter_tensor[table_.tensor_of(storage_of(key))]) table_.set_for_tensor(storage_of(key), Category::kParameter);
    }
  }

  bool touches_gradient(const Node& node) const {
    return std::any_of(node.edges.begin(), node.edges.end(), [&](const Edge& edge) {
      return (edge.is_input() && is_gradient(edge.input_key())) || (edge.is_output() && is_gradient(edge.output_key()));
    });
  }

  static bool reads_any_of(const Node& node, const VersionSet& versions) {
    return std::any_of(node.edges.begin(), node.edges.end(),
                       [&](const Edge& edge) { return edge.is_input() && versions.count(edge.input_key()) != 0; });
  }

  VersionSet versions_used_for_gradients() const {
    VersionSet used;
    for (auto node = nodes_.rbegin(); node != nodes_.rend(); ++node) {
      const bool makes_gradient = std::any_of(node->edges.begin(), node->edges.end(), [&](const Edge& edge) {
        return edge.is_output() && (is_gradient(edge.output_key()) || used.count(edge.output_key()) != 0);
      });
      if (!makes_gradient) continue;
      for (const Edge& edge : node->edges) {
        if (edge.is_input()) used.insert(edge.input_key());
      }
    }
    return used;
  }

  // Forward-pass results of inputs and activations (with parameters and temporaries allowed in).
  void mark_activations() {
    for (const Node& node : nodes_) {
      if (node.in_backward) continue;
      bool required = false;
      bool allowed = true;
      for (const Edge& edge : node.edges) {
        if (!edge.is_input()) continue;
        const std::optional<Category> input = category(edge.input_key());
        required |= is_one_of(input, {Category::kInput, Category::kActivation});
        allowed &= is_one_of(input, {Category::kInput, Category::kActivation, Category::kParameter, Category::kTemporary});
      }
      if (!required || !allowed) continue;
      for (const Edge& edge : node.edges) {
        if (edge.is_output()) table_.set_default_for_version(edge.storage, edge.output_version(), Category::kActivation);
      }
    }
  }

  // What the backward pass makes that is not a gradient: new tensors, and new versions of
  // tensors that had no category or were autograd detail already.
  void mark_autograd_detail() {
    for (const Node& node : nodes_) {
      if (!node.in_backward) continue;
      for (const Edge& edge : node.edges) {
        if (!edge.is_output()) continue;
        const int32_t version = edge.output_version();
        const std::optional<Category> before = version == 0 ? std::nullopt : table_.get(edge.storage, version - 1);
        if (version == 0 || !before || before == Category::kAutogradDetail) {
          table_.set_default_for_version(edge.storage, version, Category::kAutogradDetail);
        }
      }
    }
  }

  const MemoryEvents& events_;
  std::vector<Node> nodes_;
  CategoryTable& table_;
};

// One storage version appearing, changing or going, before it has a category.
struct StorageChange {
  int64_t time_ns = 0;
  Action action = Action::kCreate;
  int32_t storage = 0;
  int32_t version = 0;
};

// Bytes per storage: its first allocation's size, else what its tensors were seen to span.
std::vector<int64_t> storage_sizes(const MemoryEvents& events) {
  std::vector<int64_t> bytes(events.storages.size());
  std::vector<bool> allocated(events.storages.size(), false);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = events.storages[i].bytes;
  for (const Allocation& allocation : events.allocations) {
    if (allocation.storage < 0 || allocated[allocation.storage]) continue;
    allocated[allocation.storage] = true;
    bytes[allocation.storage] = std::llabs(allocation.bytes);
  }
  return bytes;
}

// Allocator events without a tensor identity: counted as UNKNOWN, matched by address.
void add_anonymous_changes(const MemoryEvents& events, std::vector<CategoryChange>& out) {
  std::map<Address, bool> live;  // allocated
  for (const Allocation& allocation : events.allocations) {
    if (allocation.storage >= 0) continue;
    const Address where = address_of(allocation.ptr, allocation.device);
    const int64_t bytes = std::llabs(allocation.bytes);
    const auto unknown = [&](int64_t time, Action action, int64_t delta) {
      out.push_back({time, action, Category::kUnknown, allocation.device, delta});
    };
    if (allocation.bytes > 0) {
      if (live[where]) {  // allocated again without a free seen: the old bytes are reused
        unknown(allocation.time_ns, Action::kIncrementVersion, -bytes);
        unknown(allocation.time_ns, Action::kIncrementVersion, bytes);
      } else {
        live[where] = true;
        unknown(allocation.time_ns, Action::kCreate, bytes);
      }
    } else {
      unknown(allocation.time_ns, Action::kDestroy, -bytes);
      if (!live[where]) unknown(kPreexistingTime, Action::kPreexisting, bytes);
      live.erase(where);
    }
  }
}

std::vector<StorageChange> storage_changes(const MemoryEvents& events, const Categorizer& categorizer) {
  const size_t n = events.storages.size();
  std::vector<int64_t> allocated_at(n, kPreexistingTime), freed_at(n, kPreexistingTime);
  for (const Allocation& allocation : events.allocations) {
    if (allocation.storage < 0) continue;
    (allocation.bytes > 0 ? allocated_at : freed_at)[allocation.storage] = allocation.time_ns;
  }
  const VersionSet all = categorizer.snapshot();
  std::vector<int32_t> last_version(n, 0);
  for (VersionKey key : all) last_version[storage_of(key)] = std::max(last_version[storage_of(key)], version_of(key));

  std::vector<StorageChange> changes;
  std::vector<bool> preexisting(n, false);
  for (VersionKey key : all) {
    if (version_of(key) == 0 && allocated_at[storage_of(key)] == kPreexistingTime) preexisting[storage_of(key)] = true;
  }
  for (size_t storage = 0; storage < n; ++storage) {
    if (preexisting[storage]) changes.push_back({kPreexistingTime, Action::kPreexisting, static_cast<int32_t>(storage), 0});
  }
  for (const Node& node : categorizer.nodes()) {
    for (const Edge& edge : node.edges) {
      if (edge.is_allocation()) {
        changes.push_back({allocated_at[edge.storage], Action::kCreate, edge.storage, 0});
      } else if (edge.mutated) {
        changes.push_back({node.time_ns, Action::kIncrementVersion, edge.storage, edge.input_version});
      }
      if (edge.deleted) {
        changes.push_back({freed_at[edge.storage], Action::kDestroy, edge.storage, last_version[edge.storage]});
      }
    }
  }
  return changes;
}

void add_storage_changes(const MemoryEvents& events, const std::vector<StorageChange>& changes,
                         const CategoryTable& table, std::vector<CategoryChange>& out) {
  const std::vector<int64_t> bytes = storage_sizes(events);
  const auto category = [&](int32_t storage, int32_t version) {
    return table.get(storage, version).value_or(Category::kUnknown);
  };
  for (const StorageChange& change : changes) {
    const Device device = events.storages[change.storage].device;
    const int64_t size = bytes[change.storage];
    const Category before = category(change.storage, change.version);
    switch (change.action) {
      case Action::kPreexisting:
      case Action::kCreate:
        out.push_back({change.time_ns, change.action, before, device, size});
        break;
      case Action::kIncrementVersion:
        out.push_back({change.time_ns, change.action, before, device, -size});
        out.push_back({change.time_ns, change.action, category(change.storage, change.version + 1), device, size});
        break;
      case Action::kDestroy:
        out.push_back({change.time_ns, change.action, before, device, -size});
        break;
    }
  }
}

}  // namespace

CategoryTable::CategoryTable(const MemoryEvents& events)
    : tensor_index_(events.storages.size()), by_storage_(events.storages.size()) {
  std::unordered_map<int64_t, int32_t> dense;
  for (size_t i = 0; i < events.storages.size(); ++i) {
    const auto [it, added] = dense.emplace(events.storages[i].tensor_id, static_cast<int32_t>(dense.size()));
    tensor_index_[i] = it->second;
  }
  by_tensor_.resize(dense.size());
}

std::optional<Category> CategoryTable::get(int32_t storage, int32_t version) const {
  if (by_tensor_[tensor_index_[storage]]) return by_tensor_[tensor_index_[storage]];
  if (by_storage_[storage]) return by_storage_[storage];
  const auto found = by_version_.find(version_key(storage, version));
  if (found != by_version_.end()) return found->second;
  return std::nullopt;
}

void CategoryTable::set_for_tensor(int32_t storage, Category category) {
  by_tensor_[tensor_index_[storage]] = category;
  storages_set_by_tensor_.push_back(storage);
}

void CategoryTable::set_for_storage(int32_t storage, Category category) { by_storage_[storage] = category; }

void CategoryTable::set_default_for_version(int32_t storage, int32_t version, Category category) {
  by_version_.emplace(version_key(storage, version), category);
}

MemoryProfile categorize(const MemoryEvents& events) {
  MemoryProfile profile{{}, CategoryTable(events)};
  Categorizer categorizer(events, build_data_flow(events), profile.categories);
  categorizer.run();
  add_anonymous_changes(events, profile.changes);
  add_storage_changes(events, storage_changes(events, categorizer), profile.categories, profile.changes);
  std::stable_sort(profile.changes.begin(), profile.changes.end(), [](const CategoryChange& a, const CategoryChange& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.action < b.action;
  });
  return profile;
}

}  // namespace perfprof::memory
