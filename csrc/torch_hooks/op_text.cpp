#include "torch_hooks/op_text.h"

#include <algorithm>

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

bool is_json_int_lists(std::string_view sizes) noexcept {
  int depth = 0;
  for (char c : sizes) {
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (--depth < 0) return false;
    } else if (!((c >= '0' && c <= '9') || c == '-' || c == ',' || c == ' ')) {
      return false;
    }
  }
  return depth == 0 && !sizes.empty() && sizes.front() == '[';
}

}  // namespace perfprof
