#pragma once
// Gives every byte in MemoryEvents a category, with torch.profiler's rules (docs/memory.md), and
// lays the result out as the changes a memory timeline is made of.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "memory/category.h"
#include "memory/memory_events.h"

namespace perfprof::memory {

// torch.profiler's Action values, as its raw timeline files write them.
enum class Action : uint8_t { kPreexisting = 1, kCreate = 2, kIncrementVersion = 3, kDestroy = 4 };

// `bytes` of `category` on `device` come (> 0) or go (< 0) at `time_ns` (kPreexistingTime: live
// before the first event). A tensor changing category is two changes at the same time.
struct CategoryChange {
  int64_t time_ns = 0;
  Action action = Action::kCreate;
  Category category = Category::kUnknown;
  Device device;
  int64_t bytes = 0;
};
constexpr int64_t kPreexistingTime = -1;

// The category of each version of each storage. Version 0 is what an allocation creates; each
// in-place write makes the next. A category given to a tensor holds for all its storages and
// versions, one given to a storage for all its versions.
class CategoryTable {
 public:
  explicit CategoryTable(const MemoryEvents& events);

  std::optional<Category> get(int32_t storage, int32_t version) const;
  void set_for_tensor(int32_t storage, Category category);
  void set_for_storage(int32_t storage, Category category);
  void set_default_for_version(int32_t storage, int32_t version, Category category);

  int32_t tensor_of(int32_t storage) const { return tensor_index_[storage]; }
  size_t num_tensors() const { return by_tensor_.size(); }
  // Storages given a category through set_for_tensor, in order.
  const std::vector<int32_t>& storages_set_by_tensor() const { return storages_set_by_tensor_; }

 private:
  std::vector<int32_t> tensor_index_;  // per storage: dense index of its tensor id
  std::vector<std::optional<Category>> by_tensor_;
  std::vector<std::optional<Category>> by_storage_;
  std::unordered_map<uint64_t, Category> by_version_;
  std::vector<int32_t> storages_set_by_tensor_;
};

struct MemoryProfile {
  std::vector<CategoryChange> changes;  // by time, then action (the order torch.profiler uses)
  CategoryTable categories;
};

MemoryProfile categorize(const MemoryEvents& events);

}  // namespace perfprof::memory
