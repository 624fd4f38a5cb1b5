#include "capture/capture_checks.h"

#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/utf8.h"
#include "memory/category.h"

namespace perfprof::capture_checks {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw CaptureFormatError(what); }

void check_string(StringId id, const KnownIds& known, const char* what) {
  if (id != kEmptyString && id >= known.strings.size()) {
    refuse(fmt::format("{} names string {}, which no Strings chunk before it gives (they end at {})", what, id,
                       std::max<size_t>(known.strings.size(), 1)));
  }
}

void check_magnitude(int64_t value, const char* what, const char* field) {
  if (value <= -kMagnitudeLimit || value >= kMagnitudeLimit) {
    refuse(fmt::format("{} has {} {}, beyond the {} a capture may hold", what, field, value, kMagnitudeLimit));
  }
}

// A schedule step's range is named ProfilerStep#<number> (its begin event may carry the number,
// naming the prefix alone): the step analyses read the number from the name.
void check_step_name(RangeKind kind, StringId name, const KnownIds& known, const char* what) {
  if (kind != RangeKind::Step) return;
  const std::string_view text = name < known.strings.size() ? std::string_view(known.strings[name]) : "";
  if (text.substr(0, kProfilerStepPrefix.size()) != kProfilerStepPrefix) {
    refuse(fmt::format("{} is a schedule step whose name (string {}) does not begin with {}", what, name,
                       kProfilerStepPrefix));
  }
}

void check_arg_set(ArgSetId id, const KnownIds& known, const char* what) {
  if (index_of(id) >= known.arg_sets) {
    refuse(fmt::format("{} names argument set {}, which no ArgSets chunk before it gives (they end at {})", what,
                       index_of(id), known.arg_sets));
  }
}

void check_range_kind(RangeKind kind, const char* what) {
  if (static_cast<uint8_t>(kind) > static_cast<uint8_t>(RangeKind::CudaDriver)) {
    refuse(fmt::format("{} has range kind {}, which is none", what, static_cast<unsigned>(kind)));
  }
}

// Preorder: each list node is followed by its `value` items; the root's subtree is the tree.
void check_int_tree(const IntTree& tree) {
  uint64_t pending = 1;  // nodes the tree still owes
  for (size_t at = 0; at < tree.size(); ++at) {
    if (pending == 0) refuse("an argument's int tree has nodes after its root's last item");
    --pending;
    const IntTreeNode& node = tree[at];
    if (!node.is_list) continue;
    if (node.value < 0 || static_cast<uint64_t>(node.value) > tree.size() - at - 1) {
      refuse(fmt::format("an argument's int tree has a list of {} items where {} nodes follow", node.value,
                         tree.size() - at - 1));
    }
    pending += static_cast<uint64_t>(node.value);
  }
  if (!tree.empty() && pending != 0) refuse("an argument's int tree ends before its lists' items");
}

void check_device(const memory::Device& device, const char* what) {
  if (device.type != memory::DeviceType::kCpu && device.type != memory::DeviceType::kCuda) {
    refuse(fmt::format("{} is on device type {}, which is none", what, static_cast<int>(device.type)));
  }
}

void check_category(memory::Category category, const char* what) {
  if (memory::index_of(category) >= memory::kNumCategories) {
    refuse(fmt::format("{} has memory category {}, which is none", what, static_cast<unsigned>(category)));
  }
}

// Storage indexes a chunk's memory records use are the chunk's own (append_events offsets them).
void check_storage(int64_t storage, size_t storages, const char* what) {
  if (storage < 0 || static_cast<uint64_t>(storage) >= storages) {
    refuse(fmt::format("{} names storage {} of the chunk's {}", what, storage, storages));
  }
}

}  // namespace

void check_entry_id(uint32_t id, uint32_t ceiling, const char* what) {
  if (id == 0) refuse(fmt::format("{} 0 is given a value", what));
  if (id >= ceiling) refuse(fmt::format("{} {} is past the ceiling of {} ids a capture may use", what, id, ceiling));
}

void check(const ArgSet& set, const KnownIds& known) {
  for (const Arg& arg : set.args) {
    if (const auto* text = std::get_if<StringId>(&arg.value)) check_string(*text, known, "an argument");
    if (const auto* texts = std::get_if<std::vector<StringId>>(&arg.value)) {
      for (const StringId text : *texts) check_string(text, known, "an argument");
    }
    if (const auto* tree = std::get_if<IntTree>(&arg.value)) check_int_tree(*tree);
  }
}

void check(const RawEvent& event, const KnownIds& known) {
  if (static_cast<uint8_t>(event.kind) > static_cast<uint8_t>(EventKind::RangeSequence)) {
    refuse(fmt::format("a host event has kind {}, which is none", static_cast<unsigned>(event.kind)));
  }
  check_range_kind(event.range_kind, "a host event");
  check_magnitude(event.ts_ns, "a host event", "time");
  check_string(event.name, known, "a host event");
  check_arg_set(event.args, known, "a host event");
  if (event.kind == EventKind::RangeBegin) check_step_name(event.range_kind, event.name, known, "a host event");
}

void check(const CompletedRange& range, const KnownIds& known) {
  check_range_kind(range.kind, "a completed range");
  check_magnitude(range.begin_ns, "a completed range", "begin");
  check_magnitude(range.end_ns, "a completed range", "end");
  check_string(range.name, known, "a completed range");
  check_arg_set(range.args, known, "a completed range");
  check_step_name(range.kind, range.name, known, "a completed range");
}

void check(const GpuActivity& activity, const KnownIds& known) {
  if (static_cast<uint8_t>(activity.kind) > static_cast<uint8_t>(GpuActivityKind::UserAnnotation)) {
    refuse(fmt::format("a GPU activity has kind {}, which is none", static_cast<unsigned>(activity.kind)));
  }
  check_string(activity.name, known, "a GPU activity");
  check_magnitude(activity.start_ns, "a GPU activity", "start");
  check_magnitude(activity.end_ns, "a GPU activity", "end");
}

void check(const ApiCall& call, const KnownIds& known) {
  check_string(call.name, known, "a CUDA API call");
  check_magnitude(call.start_ns, "a CUDA API call", "start");
  check_magnitude(call.end_ns, "a CUDA API call", "end");
}

void check(const memory::MemoryEvents& events, const KnownIds& known) {
  const size_t storages = events.storages.size();
  for (const memory::Storage& storage : events.storages) {
    check_device(storage.device, "a storage");
    check_magnitude(storage.tensor_id, "a storage", "tensor id");
    check_magnitude(storage.bytes, "a storage", "size");
  }
  for (const memory::Allocation& allocation : events.allocations) {
    check_device(allocation.device, "an allocator event");
    if (allocation.storage != -1) check_storage(allocation.storage, storages, "an allocator event");
    check_string(allocation.op, known, "an allocator event");
    check_magnitude(allocation.time_ns, "an allocator event", "time");
    check_magnitude(allocation.bytes, "an allocator event", "size");
    check_magnitude(allocation.total_allocated, "an allocator event", "total allocated");
    check_magnitude(allocation.total_reserved, "an allocator event", "total reserved");
  }
  for (const memory::FlowNode& node : events.nodes) {
    check_magnitude(node.time_ns, "a data-flow node", "time");
    for (const memory::NodeInput& input : node.inputs) {
      check_storage(input.storage, storages, "a data-flow node's input");
      if (input.write > memory::Write::kUnknown) {
        refuse(fmt::format("a data-flow node's input has write flag {}, which is none", static_cast<unsigned>(input.write)));
      }
    }
    for (const uint32_t allocation : node.allocations) {
      if (allocation >= events.allocations.size()) {
        refuse(fmt::format("a data-flow node names allocator event {} of the chunk's {}", allocation,
                           events.allocations.size()));
      }
    }
  }
  for (const memory::KnownRole& role : events.known_roles) {
    check_storage(role.storage, storages, "a known role");
    check_category(role.category, "a known role");
  }
}

void check(const memory::ObservedTensor& tensor, const KnownIds&) {
  check_device(tensor.device, "an observed tensor");
  check_category(tensor.category, "an observed tensor");
  check_magnitude(tensor.time_ns, "an observed tensor", "time");
  check_magnitude(tensor.bytes, "an observed tensor", "size");
}

// Metadata reaches Python (perfprof analyse reads the run's configuration from it) as str.
void check(const RunMetadata& entry, const KnownIds&) {
  if (!is_valid_utf8(entry.key) || !is_valid_utf8(entry.json)) refuse("a metadata entry is not UTF-8 text");
}

void check(const ProcessInfo& process, const KnownIds&) {
  // Linux's PID_MAX_LIMIT: the database packs a pid beside a thread id in one integer (Nsight's globalTid).
  constexpr int64_t kMaxPid = int64_t{1} << 22;
  if (process.pid < 0 || process.pid > kMaxPid) refuse(fmt::format("the process has pid {}, which no process has", process.pid));
  check_magnitude(process.unix_offset_ns, "the process", "Unix time offset");
}

void check(const CollectionWindow& window, const KnownIds&) {
  check_magnitude(window.begin_ns, "the window", "begin");
  check_magnitude(window.end_ns, "the window", "end");
}

void check(const KernelMetricsInput& metrics, const KnownIds&) {
  for (const KernelMetricRow& kernel : metrics.kernels) check_magnitude(kernel.start_ns, "a measured kernel", "start");
}

}  // namespace perfprof::capture_checks
