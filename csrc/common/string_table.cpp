#include "common/string_table.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace perfprof {

StringTable::StringTable() { intern(""); }

StringTable::StringTable(std::vector<std::string> strings) {
  if (strings.empty() || !strings.front().empty()) throw std::invalid_argument("perfprof: string 0 must be empty");
  for (std::string& text : strings) {
    const auto id = static_cast<StringId>(strings_.size());
    const std::string& stored = strings_.emplace_back(std::move(text));
    ids_.emplace(stored, id);  // a repeated text keeps its first id
  }
}

StringId StringTable::intern(std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  if (strings_.size() >= UINT32_MAX) throw std::length_error("perfprof: string table is full");
  const auto id = static_cast<StringId>(strings_.size());
  const std::string& stored = strings_.emplace_back(text);
  ids_.emplace(stored, id);
  return id;
}

std::string StringTable::text(StringId id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return strings_.at(id);
}

std::vector<std::string> StringTable::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {strings_.begin(), strings_.end()};
}

std::vector<std::string> StringTable::snapshot(const std::vector<bool>& used) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> copy(std::min(used.size(), strings_.size()));
  for (size_t id = 0; id < copy.size(); ++id) {
    if (used[id]) copy[id] = strings_[id];
  }
  return copy;
}

std::vector<std::string> StringTable::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  ids_.clear();
  std::vector<std::string> taken(std::make_move_iterator(strings_.begin()), std::make_move_iterator(strings_.end()));
  strings_.clear();
  return taken;
}

StringTable& global_strings() {
  static StringTable table;
  return table;
}

}  // namespace perfprof
