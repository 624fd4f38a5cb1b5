#include "memory/category.h"

#include <array>

namespace perfprof::memory {

std::string_view category_name(Category category) {
  static constexpr std::array<std::string_view, kNumCategories> kNames = {
      "PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", "UNKNOWN"};
  return kNames[index_of(category)];
}

}  // namespace perfprof::memory
