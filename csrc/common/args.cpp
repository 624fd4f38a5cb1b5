#include "common/args.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "common/json_text.h"

namespace perfprof {
namespace {

void combine(size_t& seed, size_t value) { seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }

size_t hash_of(const ArgValue& value) {
  size_t seed = value.index();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, StringId>) {
          combine(seed, std::hash<T>{}(v));
        } else if constexpr (std::is_same_v<T, std::vector<StringId>>) {
          for (const StringId id : v) combine(seed, id);
        } else {
          for (const IntTreeNode& node : v) combine(seed, std::hash<int64_t>{}(node.value) * 2 + node.is_list);
        }
      },
      value);
  return seed;
}

// The end of the subtree that begins at `at`.
size_t subtree_end(const IntTree& tree, size_t at) {
  size_t pending = 1;  // nodes still to pass
  while (pending > 0 && at < tree.size()) {
    const IntTreeNode& node = tree[at++];
    --pending;
    if (node.is_list) pending += static_cast<size_t>(node.value);
  }
  return at;
}

}  // namespace

const ArgKeySpec* spec_of(ArgKey key) {
  for (const ArgKeySpec& spec : kArgKeys) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

namespace {

// The node at `at`; returns where the next node begins.
size_t append_int_tree_node(std::string& out, const IntTree& tree, size_t at) {
  const IntTreeNode& node = tree[at++];
  if (!node.is_list) {
    append_int(out, node.value);
    return at;
  }
  out += '[';
  for (int64_t item = 0; item < node.value && at < tree.size(); ++item) {
    if (item > 0) out += ',';
    at = append_int_tree_node(out, tree, at);
  }
  out += ']';
  return at;
}

}  // namespace

void append_int_tree_json(std::string& out, const IntTree& tree) {
  if (tree.empty()) {
    out += "[]";
    return;
  }
  append_int_tree_node(out, tree, 0);
}

void append_texts_json(std::string& out, const std::vector<StringId>& texts, const std::vector<std::string>& strings) {
  out += '[';
  for (size_t k = 0; k < texts.size(); ++k) {
    if (k > 0) out += ',';
    append_json_string(out, strings[texts[k]]);
  }
  out += ']';
}

std::vector<std::vector<int64_t>> int_lists_of(const IntTree& tree) {
  std::vector<std::vector<int64_t>> lists;
  if (tree.empty() || !tree[0].is_list) return lists;
  size_t at = 1;
  for (int64_t item = 0; item < tree[0].value && at < tree.size(); ++item) {
    const size_t end = subtree_end(tree, at);
    std::vector<int64_t>& list = lists.emplace_back();
    const bool flat = tree[at].is_list && std::none_of(tree.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                                                         tree.begin() + static_cast<std::ptrdiff_t>(end),
                                                         [](const IntTreeNode& node) { return node.is_list; });
    if (flat) {
      for (size_t k = at + 1; k < end; ++k) list.push_back(tree[k].value);
    }
    at = end;
  }
  return lists;
}

size_t ArgSetTable::Hash::operator()(const ArgSet* set) const {
  size_t seed = set->args.size();
  for (const Arg& arg : set->args) {
    combine(seed, static_cast<size_t>(arg.key));
    combine(seed, hash_of(arg.value));
  }
  return seed;
}

ArgSetTable::ArgSetTable() { intern({}); }

ArgSetTable::ArgSetTable(std::vector<ArgSet> sets) {
  if (sets.empty() || !sets.front().empty()) throw std::invalid_argument("perfprof: argument set 0 must be empty");
  for (ArgSet& set : sets) {
    const ArgSetId id{static_cast<uint32_t>(sets_.size())};
    ids_.emplace(&sets_.emplace_back(std::move(set)), id);  // a repeated set keeps its first id
  }
}

ArgSetId ArgSetTable::intern(const ArgSet& set) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = ids_.find(&set); it != ids_.end()) return it->second;
  if (sets_.size() >= UINT32_MAX) throw std::length_error("perfprof: argument set table is full");
  const ArgSetId id{static_cast<uint32_t>(sets_.size())};
  ids_.emplace(&sets_.emplace_back(set), id);
  return id;
}

std::vector<ArgSet> ArgSetTable::snapshot(const std::vector<bool>& used) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ArgSet> copy(std::min(used.size(), sets_.size()));
  for (size_t id = 0; id < copy.size(); ++id) {
    if (used[id]) copy[id] = sets_[id];
  }
  return copy;
}

std::vector<ArgSet> ArgSetTable::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  ids_.clear();
  std::vector<ArgSet> taken(std::make_move_iterator(sets_.begin()), std::make_move_iterator(sets_.end()));
  sets_.clear();
  return taken;
}

ArgSetTable& global_arg_sets() {
  static ArgSetTable table;
  return table;
}

}  // namespace perfprof
