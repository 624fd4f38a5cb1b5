#include "analysis/key_averages.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/event_memory.h"
#include "analysis/event_stacks.h"
#include "analysis/function_events.h"
#include "analysis/input_shapes.h"
#include "analysis/op_annotations.h"
#include "analysis/op_tree.h"

namespace perfprof {
namespace {

// What one event adds to its row.
struct EventTotals {
  int64_t cpu_total_ns = 0, self_cpu_ns = 0, device_total_ns = 0, self_device_ns = 0;
  MemoryBytes memory, self_memory;
  uint64_t flops = 0;
};

// What identifies a row: torch's key is the name, the device type, whether the event is a user
// annotation, and when grouped the input shapes and stack.
struct RowKey {
  std::string_view name;
  bool device = false;
  bool user_annotation = false;
  std::string_view input_shapes;
  std::vector<StringId> stack;
};

class Aggregator {
 public:
  explicit Aggregator(const TraceModel& model) : model_(model) {}

  void add(const RowKey& key, const ListPosition& position, const EventTotals& totals) {
    Entry& entry = entry_of(key, position);
    if (position < entry.first) entry.first = position;
    KeyAverageRow& row = entry.row;
    row.count += 1;
    row.cpu_total_ns += totals.cpu_total_ns;
    row.self_cpu_ns += totals.self_cpu_ns;
    row.device_total_ns += totals.device_total_ns;
    row.self_device_ns += totals.self_device_ns;
    row.cpu_memory_bytes += totals.memory.cpu;
    row.self_cpu_memory_bytes += totals.self_memory.cpu;
    row.device_memory_bytes += totals.memory.device;
    row.self_device_memory_bytes += totals.self_memory.device;
    row.flops += totals.flops;
  }

  // Rows by the list position of their first event.
  std::vector<KeyAverageRow> take_rows() {
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.first < b.first; });
    std::vector<KeyAverageRow> rows;
    rows.reserve(entries_.size());
    for (Entry& entry : entries_) rows.push_back(std::move(entry.row));
    return rows;
  }

 private:
  struct Entry {
    ListPosition first;
    KeyAverageRow row;
  };

  Entry& entry_of(const RowKey& key, const ListPosition& position) {
    // Fixed-width fields, then the texts, each but the last after its length: no two keys collide.
    key_.clear();
    key_ += static_cast<char>(key.device);
    key_ += static_cast<char>(key.user_annotation);
    append_number(key.stack.size());
    for (StringId frame : key.stack) append_number(frame);
    append_number(key.input_shapes.size());
    key_.append(key.input_shapes);
    key_.append(key.name);
    const auto [found, inserted] = index_.try_emplace(key_, entries_.size());
    if (inserted) entries_.push_back({position, new_row(key)});
    return entries_[found->second];
  }

  void append_number(uint64_t value) {
    char bytes[sizeof(value)];
    std::memcpy(bytes, &value, sizeof(value));
    key_.append(bytes, sizeof(value));
  }

  KeyAverageRow new_row(const RowKey& key) const {
    KeyAverageRow row;
    row.name = key.name;
    row.input_shapes = key.input_shapes;
    row.device = key.device;
    for (StringId frame : key.stack) {
      if (!row.stack.empty()) row.stack += '\n';
      row.stack += model_.str(frame);
    }
    return row;
  }

  const TraceModel& model_;
  std::string key_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<Entry> entries_;
};

class KeyAverages {
 public:
  KeyAverages(const TraceModel& model, const KeyAverageOptions& options)
      : model_(model),
        options_(options),
        events_(build_function_events(model, options.python_functions)),
        memory_(event_memory(model, events_)),
        aggregator_(model) {
    if (options.group_by_stack_n > 0 && options.python_functions) {
      stacks_.emplace(model, events_, static_cast<size_t>(options.group_by_stack_n));
    }
  }

  std::vector<KeyAverageRow> rows() && {
    for (size_t i = 0; i < model_.ranges.size(); ++i) {
      if (is_listed(events_.kind[i])) aggregator_.add(key_of_range(i), list_position(model_, i), totals_of_range(i));
    }
    add_device_activities();
    add_allocations_outside_events();
    return aggregator_.take_rows();
  }

 private:
  RowKey key_of_range(size_t row) {
    RowKey key;
    key.name = event_name(model_, row);
    key.user_annotation = is_annotation(model_.ranges.kind[row]);
    if (options_.group_by_input_shape) key.input_shapes = input_shapes_of(model_.ranges.args[row]);
    if (stacks_) key.stack = stacks_->of_event(row);
    return key;
  }

  EventTotals totals_of_range(size_t row) {
    const RangeTable& r = model_.ranges;
    EventTotals totals;
    totals.cpu_total_ns = r.end_ns[row] - r.begin_ns[row];
    totals.self_cpu_ns = events_.self_ns[row];
    totals.device_total_ns = events_.device_total_ns[row];
    totals.self_device_ns = events_.self_device_ns[row];
    totals.memory = memory_.total[row];
    totals.self_memory = memory_.self[row];
    totals.flops = flops_of_range(row);
    return totals;
  }

  const std::string& input_shapes_of(ArgSetId args) {
    const auto [found, inserted] = shapes_.try_emplace(args);
    if (inserted) found->second = input_shapes_text(model_.args(args));
    return found->second;
  }

  uint64_t flops_of_range(size_t row) {
    const ArgSetId args = model_.ranges.args[row];
    if (args == kNoArgs) return 0;
    const uint64_t key = call_signature(model_.ranges.name[row], args);
    const auto [found, inserted] = flops_.try_emplace(key, 0);
    if (inserted) found->second = range_flops(model_, row);
    return found->second;
  }

  // torch lists each GPU activity as an event on the device: device time, no CPU time.
  void add_device_activities() {
    const std::vector<GpuActivity>& activities = model_.gpu.activities;
    for (size_t a = 0; a < activities.size(); ++a) {
      const GpuActivity& activity = activities[a];
      if (!is_device_work(activity.kind)) continue;
      RowKey key;
      key.name = model_.str(activity.name);
      key.device = true;
      EventTotals totals;
      totals.device_total_ns = totals.self_device_ns = activity.end_ns - activity.start_ns;
      aggregator_.add(key, {activity.start_ns, -activity.end_ns, model_.ranges.size() + a}, totals);
    }
  }

  // torch lists each as a zero-length "[memory]" event with its bytes.
  void add_allocations_outside_events() {
    const std::vector<memory::Allocation>& allocations = model_.memory.events.allocations;
    const size_t seen_before = model_.ranges.size() + model_.gpu.activities.size();
    RowKey key;
    key.name = kMemoryEventsName;
    for (size_t a : memory_.outside) {
      EventTotals totals;
      totals.memory = totals.self_memory = bytes_of(allocations[a]);
      aggregator_.add(key, {allocations[a].time_ns, -allocations[a].time_ns, seen_before + a}, totals);
    }
  }

  const TraceModel& model_;
  const KeyAverageOptions& options_;
  const FunctionEvents events_;
  const EventMemory memory_;
  std::optional<EventStacks> stacks_;
  Aggregator aggregator_;
  std::unordered_map<ArgSetId, std::string> shapes_;  // args -> input shapes text
  std::unordered_map<uint64_t, uint64_t> flops_;      // (name, args) -> flops
};

}  // namespace

std::vector<KeyAverageRow> key_averages(const TraceModel& model, const KeyAverageOptions& options) {
  return KeyAverages(model, options).rows();
}

}  // namespace perfprof
