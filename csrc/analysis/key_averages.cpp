#include "analysis/key_averages.h"

#include <cstring>
#include <string_view>
#include <unordered_map>

#include "analysis/flops.h"

namespace perfprof {
namespace {

// Per row: its own device work plus that of every event nested in it, and of the Python frames
// whose nearest enclosing event it is. Children follow their parents in row order, so one
// backward pass completes each row before it is added to its parent.
std::vector<int64_t> device_inclusive_ns(const TraceModel& model, const OpTree& tree,
                                         const std::vector<int64_t>& self_device) {
  std::vector<int64_t> inclusive = self_device;
  for (size_t i = inclusive.size(); i-- > 0;) {
    const int64_t parent = tree.parent_event[i];
    if (parent < 0) continue;
    // A frame's nested rows reach the event themselves: only its own work is passed on.
    inclusive[static_cast<size_t>(parent)] += is_python_frame(model, i) ? self_device[i] : inclusive[i];
  }
  return inclusive;
}

void append_id(std::string& key, uint32_t id) {
  char bytes[sizeof(id)];
  std::memcpy(bytes, &id, sizeof(id));
  key.append(bytes, sizeof(id));
}

class Aggregator {
 public:
  Aggregator(const TraceModel& model, const OpTree& tree, const KeyAverageOptions& options)
      : model_(model), tree_(tree), options_(options) {}

  // The row of event `i`, created on first sight of its key.
  KeyAverageRow& row_of(size_t i) {
    std::string_view shapes;
    if (options_.group_by_input_shape) shapes = input_dims_text(model_.str(model_.ranges.args[i]));
    std::vector<size_t> frames;
    if (options_.group_by_stack_n > 0) {
      frames = call_stack_frames(model_, tree_, i);
      if (frames.size() > static_cast<size_t>(options_.group_by_stack_n)) {
        frames.resize(static_cast<size_t>(options_.group_by_stack_n));
      }
    }
    // Fixed-width ids first, then the free text last: no two keys can collide.
    key_.clear();
    append_id(key_, model_.ranges.name[i]);
    append_id(key_, static_cast<uint32_t>(frames.size()));
    for (size_t f : frames) append_id(key_, model_.ranges.name[f]);
    key_.append(shapes);

    const auto [found, inserted] = index_.try_emplace(key_, rows_.size());
    if (inserted) rows_.push_back(new_row(i, shapes, frames));
    return rows_[found->second];
  }

  uint64_t flops_of_row(size_t i) {
    const StringId args = model_.ranges.args[i];
    if (args == kEmptyString) return 0;
    const uint64_t key = (uint64_t{model_.ranges.name[i]} << 32) | args;
    const auto [found, inserted] = flops_.try_emplace(key, 0);
    if (inserted) found->second = flops_of(model_.str(model_.ranges.name[i]), model_.str(args));
    return found->second;
  }

  std::vector<KeyAverageRow> take_rows() { return std::move(rows_); }

 private:
  KeyAverageRow new_row(size_t i, std::string_view shapes, const std::vector<size_t>& frames) const {
    KeyAverageRow row;
    row.name = model_.str(model_.ranges.name[i]);
    row.input_shapes = shapes;
    for (size_t f : frames) {
      if (!row.stack.empty()) row.stack += '\n';
      row.stack += model_.str(model_.ranges.name[f]);
    }
    return row;
  }

  const TraceModel& model_;
  const OpTree& tree_;
  const KeyAverageOptions& options_;
  std::string key_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<uint64_t, uint64_t> flops_;  // (name, args) -> flops
  std::vector<KeyAverageRow> rows_;
};

}  // namespace

std::vector<KeyAverageRow> key_averages(const TraceModel& model, const OpTree& tree,
                                        const KeyAverageOptions& options) {
  const RangeTable& r = model.ranges;
  const std::vector<int64_t> self_device = self_device_ns(model);
  const std::vector<int64_t> device_total = device_inclusive_ns(model, tree, self_device);
  Aggregator aggregator(model, tree, options);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_event(model, i)) continue;
    KeyAverageRow& row = aggregator.row_of(i);
    row.count += 1;
    row.cpu_total_ns += r.end_ns[i] - r.begin_ns[i];
    row.self_cpu_ns += tree.self_ns[i];
    row.device_total_ns += device_total[i];
    row.self_device_ns += self_device[i];
    row.flops += aggregator.flops_of_row(i);
  }
  return aggregator.take_rows();
}

}  // namespace perfprof
