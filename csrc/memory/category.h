#pragma once
// What a piece of memory holds, with torch.profiler's meanings (docs/memory.md states the rules).
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace perfprof::memory {

// In the order torch.profiler's memory timeline files index them, so an index written to a file
// means the same category in both tools.
enum class Category : uint8_t {
  kParameter,
  kOptimizerState,
  kInput,
  kTemporary,
  kActivation,
  kGradient,
  kAutogradDetail,
  kUnknown,
};
constexpr size_t kNumCategories = 8;

constexpr size_t index_of(Category category) { return static_cast<size_t>(category); }

// "PARAMETER", "OPTIMIZER_STATE", ..., "UNKNOWN".
std::string_view category_name(Category category);

}  // namespace perfprof::memory
