#include "analysis/operator_details.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/function_events.h"
#include "analysis/input_shapes.h"

namespace perfprof {

std::vector<OperatorDetail> operator_details(const TraceModel& model) {
  const FunctionEvents events = build_function_events(model, /*python_functions=*/true);
  const RangeTable& r = model.ranges;
  std::vector<OperatorDetail> rows;
  std::unordered_map<ArgSetId, std::string> shapes_of_args;
  std::unordered_map<std::string, size_t> row_of_key;  // name, '\0', input shapes
  // Ranges are grouped by thread: rows are ordered by their first call at the end.
  std::vector<ListPosition> first_call;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::CpuOp || !is_listed(events.kind[i])) continue;
    const auto [shapes, new_args] = shapes_of_args.try_emplace(r.args[i]);
    if (new_args) shapes->second = input_shapes_text(model.args(r.args[i]));
    std::string key = model.str(r.name[i]);
    key += '\0';
    key += shapes->second;
    const auto [found, inserted] = row_of_key.try_emplace(std::move(key), rows.size());
    if (inserted) {
      rows.push_back({r.name[i], shapes->second});
      first_call.push_back(list_position(model, i));
    }
    OperatorDetail& row = rows[found->second];
    row.count += 1;
    row.host_total_ns += r.end_ns[i] - r.begin_ns[i];
    row.host_self_ns += events.self_ns[i];
    row.device_total_ns += events.device_total_ns[i];
    row.device_self_ns += events.self_device_ns[i];
    if (list_position(model, i) < first_call[found->second]) first_call[found->second] = list_position(model, i);
  }
  std::vector<size_t> order(rows.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first_call[a] < first_call[b]; });
  reorder(rows, order);
  return rows;
}

}  // namespace perfprof
