#include "torch_hooks/op_text.h"

#include <algorithm>
#include <vector>

namespace perfprof {
namespace {

constexpr std::string_view kSeq = ", seq = ";
constexpr std::string_view kOpId = ", op_id = ";
constexpr std::string_view kSizes = ", sizes = ";
constexpr std::string_view kInputOpIds = ", input_op_ids = ";

int64_t parse_non_negative(std::string_view digits) noexcept {
  int64_t value = 0;
  size_t used = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || value > (INT64_MAX - 9) / 10) break;
    value = value * 10 + (c - '0');
    ++used;
  }
  return used == 0 ? -1 : value;
}

}  // namespace

OpText parse_op_text(std::string_view text) noexcept {
  OpText op;
  size_t name_end = text.size();
  for (std::string_view marker : {kSeq, kOpId, kSizes}) name_end = std::min(name_end, text.find(marker));
  op.name = text.substr(0, name_end);
  if (const size_t seq = text.find(kSeq, name_end); seq != std::string_view::npos) {
    op.sequence = parse_non_negative(text.substr(seq + kSeq.size()));
  }
  if (const size_t sizes = text.find(kSizes, name_end); sizes != std::string_view::npos) {
    const size_t begin = sizes + kSizes.size();
    const size_t end = std::min(text.size(), text.find(kInputOpIds, begin));
    op.sizes = text.substr(begin, end - begin);
  }
  return op;
}

std::optional<IntTree> parse_int_lists(std::string_view sizes) noexcept {
  try {
    IntTree tree;
    std::vector<size_t> open;  // nodes of the lists being read, innermost last
    size_t at = 0;
    const auto skip_spaces = [&] {
      while (at < sizes.size() && sizes[at] == ' ') ++at;
    };
    const auto add_item = [&](IntTreeNode node) {
      if (open.empty()) return false;  // an item outside the outer list
      ++tree[open.back()].value;
      tree.push_back(node);
      return true;
    };
    skip_spaces();
    if (at == sizes.size() || sizes[at] != '[') return std::nullopt;
    tree.push_back({0, true});
    open.push_back(0);
    ++at;
    while (!open.empty()) {
      skip_spaces();
      if (at == sizes.size()) return std::nullopt;
      const bool first_item = tree[open.back()].value == 0;
      if (sizes[at] == ']') {
        open.pop_back();
        ++at;
        continue;
      }
      if (!first_item) {
        if (sizes[at] != ',') return std::nullopt;
        ++at;
        skip_spaces();
        if (at == sizes.size()) return std::nullopt;
      }
      if (sizes[at] == '[') {
        if (!add_item({0, true})) return std::nullopt;
        open.push_back(tree.size() - 1);
        ++at;
        continue;
      }
      const bool negative = sizes[at] == '-';
      if (negative) ++at;
      const size_t digits_begin = at;
      int64_t value = 0;
      while (at < sizes.size() && sizes[at] >= '0' && sizes[at] <= '9') {
        if (value > (INT64_MAX - 9) / 10) return std::nullopt;
        value = value * 10 + (sizes[at++] - '0');
      }
      if (at == digits_begin || !add_item({negative ? -value : value, false})) return std::nullopt;
    }
    skip_spaces();
    if (at != sizes.size()) return std::nullopt;
    return tree;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace perfprof
