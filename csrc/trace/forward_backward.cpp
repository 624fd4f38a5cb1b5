#include "trace/forward_backward.h"

#include <algorithm>
#include <cstdint>
#include <map>

namespace perfprof {

std::vector<std::pair<size_t, size_t>> link_forward_backward(const std::vector<CompletedRange>& ranges) {
  std::vector<size_t> order;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].sequence >= 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranges[a].end_ns < ranges[b].end_ns; });

  std::map<std::pair<int64_t, int64_t>, size_t> forward_of;  // (thread, sequence number) -> range
  std::vector<std::pair<size_t, size_t>> links;
  for (size_t i : order) {
    const CompletedRange& range = ranges[i];
    if (range.forward_os_tid != 0) {  // a backward operator
      const auto found = forward_of.find({range.forward_os_tid, range.sequence});
      if (found == forward_of.end()) continue;
      links.emplace_back(found->second, i);
      forward_of.erase(found);
      continue;
    }
    const auto [slot, inserted] = forward_of.try_emplace({range.os_tid, range.sequence}, i);
    if (!inserted && range.begin_ns >= ranges[slot->second].begin_ns) slot->second = i;
  }
  return links;
}

}  // namespace perfprof
