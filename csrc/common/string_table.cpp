#include "common/string_table.h"

#include <stdexcept>

namespace perfprof {

StringTable::StringTable() { intern(""); }

StringId StringTable::intern(std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  if (strings_.size() >= UINT32_MAX) throw std::length_error("perfprof: string table is full");
  const auto id = static_cast<StringId>(strings_.size());
  const std::string& stored = strings_.emplace_back(text);
  ids_.emplace(stored, id);
  return id;
}

std::vector<std::string> StringTable::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {strings_.begin(), strings_.end()};
}

StringTable& global_strings() {
  static StringTable table;
  return table;
}

}  // namespace perfprof
