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

// Where an event stands in torch's tree.
struct EventPlace {
  bool async = false;   // ends on another thread than it began on: outside the tree
  bool nested = false;  // has a parent event
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

// The row of `key`, with nothing added yet.
KeyAverageRow new_row(const TraceModel& model, const RowKey& key) {
  KeyAverageRow row;
  row.name = key.name;
  row.input_shapes = key.input_shapes;
  row.device = key.device;
  row.user_annotation = key.user_annotation;
  for (StringId frame : key.stack) {
    if (!row.stack.empty()) row.stack += '\n';
    row.stack += model.str(frame);
  }
  return row;
}

void add_event(KeyAverageRow& row, const EventTotals& totals) {
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

class Aggregator {
 public:
  explicit Aggregator(const TraceModel& model) : model_(model) {}

  // `place` is the event's place in the tree, which the row keeps when the event is its first.
  void add(const RowKey& key, const ListPosition& position, const EventTotals& totals, const EventPlace& place) {
    Entry& entry = entry_of(key, position);
    if (position <= entry.first) {
      entry.first = position;
      entry.row.first_async = place.async;
      entry.row.first_nested = place.nested;
    }
    add_event(entry.row, totals);
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
    if (inserted) entries_.push_back({position, new_row(model_, key)});
    return entries_[found->second];
  }

  void append_number(uint64_t value) {
    char bytes[sizeof(value)];
    std::memcpy(bytes, &value, sizeof(value));
    key_.append(bytes, sizeof(value));
  }

  const TraceModel& model_;
  std::string key_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<Entry> entries_;
};

// Every event of torch's list with its key and what it adds to its row.
class ListedEvents {
 public:
  ListedEvents(const TraceModel& model, const KeyAverageOptions& options)
      : model_(model),
        options_(options),
        events_(build_function_events(model, options.python_functions)),
        memory_(event_memory(model, events_)) {
    if (options.group_by_stack_n > 0 && options.python_functions) {
      stacks_.emplace(model, events_, static_cast<size_t>(options.group_by_stack_n));
    }
  }

  // Calls visit(key, position, totals, source) for each event: host ranges (source: their row),
  // then GPU activities and allocations outside every event (source: -1). place_of(source) says
  // where the event stands in the tree.
  template <typename Visit>
  void for_each(Visit&& visit) {
    for (size_t i = 0; i < model_.ranges.size(); ++i) {
      if (is_listed(events_.kind[i])) visit(key_of_range(i), list_position(model_, i), totals_of_range(i), int64_t(i));
    }
    visit_device_activities(visit);
    visit_allocations_outside_events(visit);
  }

  const FunctionEvents& events() const { return events_; }

  // The GPU activity (index in model.gpu.activities) an event visited at `position` is, if it is
  // one: visit_device_activities numbers them after the ranges.
  static std::optional<size_t> activity_of(const TraceModel& model, const ListPosition& position) {
    const size_t seen = std::get<2>(position);
    const size_t ranges = model.ranges.size();
    if (seen < ranges || seen >= ranges + model.gpu.activities.size()) return std::nullopt;
    return seen - ranges;
  }

  EventPlace place_of(int64_t source) const {
    if (source < 0) return {};
    const auto row = static_cast<size_t>(source);
    return {events_.kind[row] == FunctionEventKind::kAsync,
            events_.kind[row] == FunctionEventKind::kNested && events_.parent[row] >= 0};
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
  template <typename Visit>
  void visit_device_activities(Visit&& visit) {
    const std::vector<GpuActivity>& activities = model_.gpu.activities;
    for (size_t a = 0; a < activities.size(); ++a) {
      const GpuActivity& activity = activities[a];
      if (!is_device_work(activity.kind)) continue;
      RowKey key;
      key.name = model_.str(activity.name);
      key.device = true;
      EventTotals totals;
      totals.device_total_ns = totals.self_device_ns = activity.end_ns - activity.start_ns;
      visit(key, ListPosition{activity.start_ns, -activity.end_ns, model_.ranges.size() + a}, totals, int64_t{-1});
    }
  }

  // torch lists each as a zero-length "[memory]" event with its bytes.
  template <typename Visit>
  void visit_allocations_outside_events(Visit&& visit) {
    const std::vector<memory::Allocation>& allocations = model_.memory.events.allocations;
    const size_t seen_before = model_.ranges.size() + model_.gpu.activities.size();
    RowKey key;
    key.name = kMemoryEventsName;
    for (size_t a : memory_.outside) {
      EventTotals totals;
      totals.memory = totals.self_memory = bytes_of(allocations[a]);
      visit(key, ListPosition{allocations[a].time_ns, -allocations[a].time_ns, seen_before + a}, totals, int64_t{-1});
    }
  }

  const TraceModel& model_;
  const KeyAverageOptions& options_;
  const FunctionEvents events_;
  const EventMemory memory_;
  std::optional<EventStacks> stacks_;
  std::unordered_map<ArgSetId, std::string> shapes_;  // args -> input shapes text
  std::unordered_map<uint64_t, uint64_t> flops_;      // (name, args) -> flops
};

}  // namespace

std::vector<KeyAverageRow> key_averages(const TraceModel& model, const KeyAverageOptions& options) {
  Aggregator aggregator(model);
  ListedEvents listed(model, options);
  listed.for_each([&](const RowKey& key, const ListPosition& position, const EventTotals& totals, int64_t source) {
    aggregator.add(key, position, totals, listed.place_of(source));
  });
  return aggregator.take_rows();
}

std::vector<FunctionEventRow> function_event_list(const TraceModel& model, const KeyAverageOptions& options) {
  KeyAverageOptions with_shapes = options;
  with_shapes.group_by_input_shape = true;
  ListedEvents listed(model, with_shapes);
  std::vector<std::pair<ListPosition, FunctionEventRow>> events;
  std::unordered_map<int64_t, size_t> event_of_range;  // range row -> its entry in `events`
  const RangeTable& r = model.ranges;
  const std::vector<uint32_t> python_ids = number_python_frames(model);
  const std::vector<FlowEnd> range_flows = range_flow_ends(model);
  const std::vector<FlowEnd> activity_flows = activity_flow_ends(model);
  listed.for_each([&](const RowKey& key, const ListPosition& position, const EventTotals& totals, int64_t range) {
    FunctionEventRow event;
    event.totals = new_row(model, key);
    add_event(event.totals, totals);
    event.begin_ns = std::get<0>(position);
    event.end_ns = -std::get<1>(position);
    if (range >= 0) {
      const auto row = static_cast<size_t>(range);
      event.os_tid = model.threads[r.track[row]].os_tid;
      event.async = listed.place_of(range).async;
      event.sequence = r.sequence[row];
      event.category = category_name(r.kind[row]);
      event.args = r.args[row];
      event.device_index = model.pid;
      event.external_id = range_external_id(model, row);
      event.python_id = python_ids[row] != 0 ? int64_t{python_ids[row]} : -1;
      event.flow = range_flows[row];
      event_of_range.emplace(range, events.size());
    } else if (const std::optional<size_t> activity = ListedEvents::activity_of(model, position)) {
      const GpuActivity& a = model.gpu.activities[*activity];
      event.category = gpu_category(a.kind);
      event.device_index = a.device;
      event.external_id = model.gpu.external_ids[*activity];
      event.flow = activity_flows[*activity];
    } else {  // allocator events outside every host event, written as torch writes them
      event.category = "cpu_instant_event";
      event.device_index = model.pid;
    }
    events.emplace_back(position, std::move(event));
  });
  // Parents by range row, then everything by list position, then parents as list indices.
  std::vector<int64_t> parent_entry(events.size(), -1);
  for (const auto& [range, entry] : event_of_range) {
    const int64_t parent = listed.events().parent[static_cast<size_t>(range)];
    if (listed.events().kind[static_cast<size_t>(range)] == FunctionEventKind::kNested && parent >= 0) {
      parent_entry[entry] = static_cast<int64_t>(event_of_range.at(parent));
    }
  }
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return events[a].first < events[b].first; });
  std::vector<int64_t> index_of_entry(events.size());
  for (size_t i = 0; i < order.size(); ++i) index_of_entry[order[i]] = static_cast<int64_t>(i);
  std::vector<FunctionEventRow> list;
  list.reserve(events.size());
  for (size_t entry : order) {
    FunctionEventRow& event = events[entry].second;
    event.parent = parent_entry[entry] < 0 ? -1 : index_of_entry[static_cast<size_t>(parent_entry[entry])];
    list.push_back(std::move(event));
  }
  return list;
}

}  // namespace perfprof
