#include "bindings/torch_memory.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "memory/memory_events.h"
#include "record/recorder.h"

namespace py = pybind11;

namespace perfprof::bindings {
namespace {

using memory::Allocation;
using memory::Device;
using memory::DeviceType;
using memory::FlowNode;
using memory::MemoryEvents;
using memory::NodeInput;
using memory::Write;

// torch._C._profiler._EventType and RecordScope values.
constexpr int kTorchOpEvent = 0;
constexpr int kAllocationEvent = 3;
constexpr int kBackwardFunctionScope = 1;

Device device_of(py::handle device) {
  const py::object index = device.attr("index");
  const bool cuda = device.attr("type").cast<std::string>() == "cuda";
  return {cuda ? DeviceType::kCuda : DeviceType::kCpu, static_cast<int16_t>(index.is_none() ? -1 : index.cast<int>())};
}

std::optional<int64_t> optional_int(py::handle value) {
  if (value.is_none()) return std::nullopt;
  return value.cast<int64_t>();
}

// Reads torch's tree of profiler events (_ProfilerResult.experimental_event_tree()) into
// MemoryEvents: every allocator event, and the data-flow nodes torch.profiler's memory profile
// would build from the same tree.
class TreeReader {
 public:
  TreeReader(py::object write_flags, py::dict os_thread_ids)
      : write_flags_(std::move(write_flags)), os_thread_ids_(std::move(os_thread_ids)),
        unix_offset_ns_(monotonic_to_unix_offset_ns()) {}

  void read(py::handle roots) {
    for (py::handle root : roots) visit(root, Context{});
  }

  MemoryEvents take() {
    memory::sort_by_time(events_);
    return std::move(events_);
  }

 private:
  struct Context {
    int64_t node = -1;  // index of the data-flow node being filled, if any
    bool in_backward = false;
    StringId op = kEmptyString;  // innermost operator
  };

  void visit(py::handle event, Context context) {
    const int tag = event.attr("tag").cast<int>();
    if (tag == kAllocationEvent) {
      add_allocation(event, context);
      return;
    }
    if (tag == kTorchOpEvent) add_operator(event, context);
    for (py::handle child : event.attr("children")) visit(child, context);
  }

  // The topmost operator with a schema, or a backward function, starts a data-flow node that
  // everything it calls belongs to.
  void add_operator(py::handle event, Context& context) {
    const py::object fields = event.attr("extra_fields");
    const std::string name = event.attr("name").cast<std::string>();
    const bool backward_function = fields.attr("scope").cast<int>() == kBackwardFunctionScope;
    const py::list inputs = fields.attr("inputs");
    const std::optional<std::vector<bool>>& writes = write_flags(name, inputs.size());
    context.in_backward |= backward_function;
    context.op = global_strings().intern(name);
    if (context.node < 0 && (backward_function || writes)) {
      context.node = static_cast<int64_t>(events_.nodes.size());
      events_.nodes.push_back({to_monotonic(event.attr("start_time_ns")), context.in_backward, {}, {}});
    }
    if (context.node >= 0) add_inputs(inputs, writes, events_.nodes[context.node]);
    if (backward_function && name == "torch::autograd::AccumulateGrad") note_new_gradient(event);
  }

  void add_inputs(const py::list& inputs, const std::optional<std::vector<bool>>& writes, FlowNode& node) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Write write = !writes ? Write::kUnknown : (*writes)[i] ? Write::kYes : Write::kNo;
      const py::handle input = inputs[i];
      if (PyList_Check(input.ptr())) {
        for (py::handle item : input) add_input(item, write, node);
      } else {
        add_input(input, write, node);
      }
    }
  }

  void add_input(py::handle input, Write write, FlowNode& node) {
    const int32_t storage = storage_of_tensor(input);
    if (storage >= 0) node.inputs.push_back({storage, write});
  }

  // AccumulateGrad either detaches a new gradient or adds into the existing one (aten::detach or
  // aten::add_ first): that tensor is the gradient.
  void note_new_gradient(py::handle event) {
    const py::list children = event.attr("children");
    if (children.empty() || children[0].attr("tag").cast<int>() != kTorchOpEvent) return;
    const std::string child = children[0].attr("name").cast<std::string>();
    if (child != "aten::detach" && child != "aten::add_") return;
    const py::list inputs = children[0].attr("extra_fields").attr("inputs");
    if (inputs.empty()) return;
    const int32_t storage = storage_of_tensor(inputs[0]);
    if (storage >= 0) events_.known_roles.push_back({storage, memory::Category::kGradient});
  }

  void add_allocation(py::handle event, const Context& context) {
    const py::object fields = event.attr("extra_fields");
    Allocation allocation;
    allocation.time_ns = to_monotonic(event.attr("start_time_ns"));
    allocation.ptr = fields.attr("ptr").cast<uint64_t>();
    allocation.bytes = fields.attr("alloc_size").cast<int64_t>();
    allocation.total_allocated = fields.attr("total_allocated").cast<int64_t>();
    allocation.total_reserved = fields.attr("total_reserved").cast<int64_t>();
    allocation.device = device_of(fields.attr("device"));
    allocation.os_tid = os_thread_of(event.attr("start_tid"));
    allocation.op = context.op;
    const std::optional<int64_t> id = optional_int(fields.attr("id"));
    const std::optional<int64_t> allocation_id = optional_int(fields.attr("allocation_id"));
    if (id && allocation_id) allocation.storage = storage_index(*id, *allocation_id, allocation.ptr, allocation.device);
    const uint32_t index = static_cast<uint32_t>(events_.allocations.size());
    events_.allocations.push_back(allocation);
    if (context.node >= 0) {
      events_.nodes[context.node].allocations.push_back(index);
    } else {
      events_.nodes.push_back({allocation.time_ns, context.in_backward, {}, {index}});
    }
  }

  // The storage of a _TensorMetadata input, or -1 for other inputs and tensors without identity.
  int32_t storage_of_tensor(py::handle input) {
    if (input.is_none() || !py::hasattr(input, "allocation_id")) return -1;
    const std::optional<int64_t> id = optional_int(input.attr("id"));
    const std::optional<int64_t> allocation_id = optional_int(input.attr("allocation_id"));
    const std::optional<int64_t> ptr = optional_int(input.attr("storage_data_ptr"));
    if (!id || !allocation_id || !ptr) return -1;
    const int32_t storage = storage_index(*id, *allocation_id, static_cast<uint64_t>(*ptr), device_of(input.attr("device")));
    memory::Storage& known = events_.storages[storage];
    known.bytes = std::max(known.bytes, bytes_spanned(input));
    return storage;
  }

  // What a strided tensor's sizes and strides reach into its storage (torch.profiler's estimate
  // for storages allocated before profiling).
  static int64_t bytes_spanned(py::handle tensor) {
    if (py::str(tensor.attr("layout")).cast<std::string>() != "torch.strided") return 0;
    const auto sizes = tensor.attr("sizes").cast<std::vector<int64_t>>();
    const auto strides = tensor.attr("strides").cast<std::vector<int64_t>>();
    int64_t elements = sizes.empty() ? 1 : 0;
    for (size_t i = 0; i < sizes.size() && i < strides.size(); ++i) elements = std::max(elements, sizes[i] * strides[i]);
    return elements * tensor.attr("dtype").attr("itemsize").cast<int64_t>();
  }

  int32_t storage_index(int64_t id, int64_t allocation_id, uint64_t ptr, Device device) {
    const auto key = std::make_tuple(id, allocation_id, static_cast<int>(device.type), device.index);
    const auto [it, added] = storages_.emplace(key, static_cast<int32_t>(events_.storages.size()));
    if (added) events_.storages.push_back({id, ptr, device, 0});
    return it->second;
  }

  // Per (operator, number of inputs): which inputs some schema marks as written; nullopt when
  // torch knows no such schema.
  const std::optional<std::vector<bool>>& write_flags(const std::string& name, size_t num_inputs) {
    const auto key = std::make_pair(name, num_inputs);
    auto found = write_flags_cache_.find(key);
    if (found == write_flags_cache_.end()) {
      const py::object flags = write_flags_(name, num_inputs);
      std::optional<std::vector<bool>> value;
      if (!flags.is_none()) value = flags.cast<std::vector<bool>>();
      found = write_flags_cache_.emplace(key, std::move(value)).first;
    }
    return found->second;
  }

  // torch's tree names threads by its own ids; the trace by OS ids (the caller's when unknown).
  int64_t os_thread_of(py::handle torch_thread_id) const {
    const py::object found = os_thread_ids_.attr("get")(torch_thread_id);
    return found.is_none() ? current_os_tid() : found.cast<int64_t>();
  }

  int64_t to_monotonic(py::handle unix_ns) const { return unix_ns.cast<int64_t>() - unix_offset_ns_; }

  py::object write_flags_;
  py::dict os_thread_ids_;
  int64_t unix_offset_ns_;
  MemoryEvents events_;
  std::map<std::tuple<int64_t, int64_t, int, int16_t>, int32_t> storages_;
  std::map<std::pair<std::string, size_t>, std::optional<std::vector<bool>>> write_flags_cache_;
};

size_t import_torch_memory(py::iterable roots, py::object write_flags, py::dict os_thread_ids) {
  TreeReader reader(std::move(write_flags), std::move(os_thread_ids));
  reader.read(roots);
  MemoryEvents events = reader.take();
  const size_t count = events.allocations.size();
  Recorder::instance().add_memory(std::move(events));
  return count;
}

void add_observed_tensors(const std::vector<std::tuple<uint64_t, int, int, int64_t, int64_t, int>>& tensors) {
  std::vector<memory::ObservedTensor> observed;
  observed.reserve(tensors.size());
  for (const auto& [ptr, device_type, device_index, time_ns, bytes, category] : tensors) {
    observed.push_back({ptr, {static_cast<DeviceType>(device_type), static_cast<int16_t>(device_index)}, time_ns, bytes,
                        static_cast<memory::Category>(category)});
  }
  Recorder::instance().add_observed_tensors(std::move(observed));
}

}  // namespace

void add_torch_memory(py::module_& module) {
  module.def("import_torch_memory", &import_torch_memory, py::arg("event_tree"), py::arg("write_flags"),
             py::arg("os_thread_ids"),
             "Add the allocator events and operator data flow of a torch _ProfilerResult's\n"
             "experimental_event_tree() to the recorder. write_flags(name, num_inputs) returns which\n"
             "inputs the operator writes (a list of bools), or None when no schema matches;\n"
             "os_thread_ids maps torch's thread ids to OS ones (from import_torch_events).\n"
             "Returns how many allocator events were read.");
  module.def("add_observed_tensors", &add_observed_tensors, py::arg("tensors"),
             "Record tensors seen in a known role: (data_ptr, device_type, device_index, now_ns,\n"
             "bytes, category) tuples; category is MEMORY_CATEGORIES' index.");
  py::list categories;
  for (size_t i = 0; i < memory::kNumCategories; ++i) {
    categories.append(std::string(memory::category_name(static_cast<memory::Category>(i))));
  }
  module.attr("MEMORY_CATEGORIES") = py::tuple(categories);
}

}  // namespace perfprof::bindings
