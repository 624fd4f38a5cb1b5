#pragma once
// Interned strings: events store a 32-bit id instead of a string. Id 0 is the empty string.
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace perfprof {

using StringId = uint32_t;
inline constexpr StringId kEmptyString = 0;

class StringTable {
 public:
  StringTable();
  // A table holding `strings` at their indexes (a capture's: ids it does not use are empty).
  explicit StringTable(std::vector<std::string> strings);
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // Thread-safe. Callers on a hot path cache the id (see bindings/fast_calls.cpp).
  StringId intern(std::string_view text);

  // The text of `id` (a copy: the table may grow meanwhile). Throws std::out_of_range for an id
  // it does not hold.
  std::string text(StringId id) const;
  // Copy of every string, indexed by id, for a trace that must outlive later interning.
  std::vector<std::string> snapshot() const;
  // Copy of the strings whose ids are marked in `used` (others empty), indexed by id.
  std::vector<std::string> snapshot(const std::vector<bool>& used) const;
  // Every string, indexed by id, moved out; the table is left empty.
  std::vector<std::string> take();

 private:
  mutable std::mutex mutex_;
  std::deque<std::string> strings_;  // deque: references stay valid as it grows
  std::unordered_map<std::string_view, StringId> ids_;
};

// The process-wide table every recorder event refers to.
StringTable& global_strings();

// Text -> StringId in front of the global table for one reader of many repeating texts (names
// read from torch): the global table (a mutex and a copy) is reached once per distinct text.
// Not thread-safe.
class StringCache {
 public:
  StringId intern(std::string_view text) {
    const auto found = ids_.find(text);
    if (found != ids_.end()) return found->second;
    const StringId id = global_strings().intern(text);
    ids_.emplace(texts_.emplace_back(text), id);
    return id;
  }

 private:
  std::deque<std::string> texts_;  // the keys' storage: a deque keeps them in place as it grows
  std::unordered_map<std::string_view, StringId> ids_;
};

}  // namespace perfprof
