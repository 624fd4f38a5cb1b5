#include "analysis/op_annotations.h"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

#include "analysis/flops.h"

namespace perfprof {
namespace {

uint64_t flops_from_inputs(const TraceModel& model, size_t row) {
  const ArgSet& args = model.args(model.ranges.args[row]);
  return flops_of(model.str(model.ranges.name[row]), operator_inputs(args, model.strings));
}

}  // namespace

uint64_t range_flops(const TraceModel& model, size_t row) {
  const int64_t* stored = model.args(model.ranges.args[row]).find<int64_t>(ArgKey::Flops);
  return stored ? static_cast<uint64_t>(*stored) : 0;
}

void annotate_flops(TraceModel& model) {
  RangeTable& r = model.ranges;
  std::unordered_map<uint64_t, ArgSetId> annotated;  // (name, args) -> args with flops
  std::map<std::pair<ArgSetId, uint64_t>, ArgSetId> made;  // (args, flops) -> the set made of them
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::CpuOp || r.args[i] == kNoArgs) continue;
    const uint64_t key = call_signature(r.name[i], r.args[i]);
    const auto [found, inserted] = annotated.try_emplace(key, r.args[i]);
    const uint64_t count = inserted ? flops_from_inputs(model, i) : 0;
    if (count > 0 && count <= INT64_MAX) {  // an Int argument holds it
      const auto [set, added] = made.try_emplace({r.args[i], count}, static_cast<ArgSetId>(model.arg_sets.size()));
      if (added) {
        ArgSet with_flops = model.args(r.args[i]);
        with_flops.args.push_back({ArgKey::Flops, static_cast<int64_t>(count)});
        model.arg_sets.push_back(std::move(with_flops));
      }
      found->second = set->second;
    }
    r.args[i] = found->second;
  }
}

}  // namespace perfprof
