#include "python_hooks/torch_memory.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "python_hooks/py_fields.h"
#include "common/clock.h"
#include "common/string_table.h"
#include "memory/memory_events.h"
#include "record/recorder.h"

namespace py = pybind11;

namespace perfprof::python_hooks {
namespace {

using memory::Allocation;
using memory::Device;
using memory::DeviceType;
using memory::FlowNode;
using memory::MemoryEvents;
using memory::Write;

// torch's RecordScope of a backward function.
constexpr int kBackwardFunctionScope = 1;

// What is read of torch's event tree (torch._C._profiler), by attribute.
struct TreeFields {
  // _ProfilerEvent
  InternedName name{"name"};
  InternedName children{"children"};
  InternedName start_time_ns{"start_time_ns"};
  InternedName start_tid{"start_tid"};
  InternedName extra_fields{"extra_fields"};
  // _ExtraFields_TorchOp
  InternedName scope{"scope"};
  InternedName inputs{"inputs"};
  // _ExtraFields_Allocation; id and allocation_id also of _TensorMetadata
  InternedName ptr{"ptr"};
  InternedName alloc_size{"alloc_size"};
  InternedName total_allocated{"total_allocated"};
  InternedName total_reserved{"total_reserved"};
  InternedName device{"device"};
  InternedName id{"id"};
  InternedName allocation_id{"allocation_id"};
  // _TensorMetadata
  InternedName storage_data_ptr{"storage_data_ptr"};
  InternedName layout{"layout"};
  InternedName sizes{"sizes"};
  InternedName strides{"strides"};
  InternedName dtype{"dtype"};
  // torch.device, torch.dtype
  InternedName type{"type"};
  InternedName index{"index"};
  InternedName itemsize{"itemsize"};
};

const TreeFields& fields() {
  static const TreeFields* const instance = new TreeFields();  // needs the GIL: built on first use
  return *instance;
}

// A type of torch's profiler module (a class of its event tree).
PyTypeObject* type_in(const py::module_& module, const char* name) {
  const py::object type = module.attr(name);
  if (!PyType_Check(type.ptr())) throw py::type_error(std::string("torch._C._profiler.") + name + " is not a type");
  return reinterpret_cast<PyTypeObject*>(type.ptr());
}

// The kinds of recorded operator inputs that torch.profiler tells apart when it matches an
// operator to its schemas, one letter each (memory.write_flags matches them).
namespace input_kind {
constexpr char kTensor = 'T';      // a tensor with an identity
constexpr char kTensorList = 'L';  // a list of tensors that all have one (or an empty list)
constexpr char kNone = 'N';        // None, or a tensor without identity, which torch takes for None
constexpr char kOtherList = 'l';
constexpr char kBool = 'b';
constexpr char kInt = 'i';
constexpr char kFloat = 'f';
constexpr char kComplex = 'c';
constexpr char kOther = 'o';
}  // namespace input_kind

// torch.profiler's key of a storage (TensorKey) without its device: allocation ids come from one
// counter over every (storage, device) pair, so the device adds nothing to tell storages apart.
struct StorageKey {
  int64_t tensor_id = 0;
  int64_t allocation_id = 0;
  bool operator==(const StorageKey& other) const {
    return tensor_id == other.tensor_id && allocation_id == other.allocation_id;
  }
};
struct StorageKeyHash {
  size_t operator()(const StorageKey& key) const {
    return std::hash<int64_t>()(key.tensor_id * 0x9E3779B97F4A7C15ULL ^ key.allocation_id);
  }
};

// A tensor input with an identity: its storage, and the metadata torch's size estimate needs.
struct TensorInput {
  StorageKey key;
  uint64_t ptr = 0;
  py::handle metadata;  // the _TensorMetadata, alive while its operator's input list is
};

// One operator's inputs as read: a kind per input, and the tensors with identity in order
// (those of a list input one after the other), each with the input it belongs to.
struct OperatorInputs {
  py::object list;  // keeps the _TensorMetadata objects alive
  std::string kinds;
  std::vector<TensorInput> tensors;
  std::vector<uint32_t> input_of_tensor;
};

// Reads torch's tree of profiler events (_ProfilerResult.experimental_event_tree()) into
// MemoryEvents: every allocator event, and the data-flow nodes torch.profiler's memory profile
// would build from the same tree. Fields are read with raw CPython calls on interned names, and
// only where they matter (measured: docs/performance.md). What cannot be read is counted, never
// fatal: an allocator event without its fields is left out; an operator without its inputs
// takes part without them.
class TreeReader {
 public:
  TreeReader(py::object write_flags, int64_t window_begin_ns)
      : write_flags_(std::move(write_flags)),
        profiler_module_(py::module_::import("torch._C._profiler")),
        operator_type_(type_in(profiler_module_, "_ExtraFields_TorchOp")),
        allocation_type_(type_in(profiler_module_, "_ExtraFields_Allocation")),
        tensor_metadata_type_(type_in(profiler_module_, "_TensorMetadata")),
        strided_(py::module_::import("torch").attr("strided")),
        unix_offset_ns_(monotonic_to_unix_offset_ns()),
        window_begin_ns_(window_begin_ns) {}

  void read(py::handle roots) {
    const GcPause no_collections_while_reading;  // hundreds of thousands of short-lived objects
    const py::object sequence = py::reinterpret_steal<py::object>(PySequence_Fast(roots.ptr(), "event roots"));
    if (!sequence) throw py::error_already_set();
    visit_all(sequence, Context{});
    size_unallocated_storages();
  }

  // What was read, in the order read; the thread of each allocation is torch's id for it.
  MemoryEvents take() { return std::move(events_); }
  std::vector<int64_t> take_torch_tids() { return std::move(torch_tids_); }

  uint64_t skipped_events() const { return skipped_events_; }
  const FieldReader& reads() const { return reader_; }

 private:
  struct Context {
    int64_t node = -1;  // index of the data-flow node being filled, if any
    bool in_backward = false;
    PyObject* op_name = nullptr;  // the innermost operator's name (a str its visit keeps alive)
  };

  void visit_all(const py::object& sequence, const Context& context) {
    const Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence.ptr());
    PyObject** const items = PySequence_Fast_ITEMS(sequence.ptr());
    for (Py_ssize_t i = 0; i < size; ++i) visit(items[i], context);
  }

  // An event's kind is told by the type of its extra fields (one read instead of `tag`, which
  // makes a new enum object each time).
  void visit(py::handle event, Context context) {
    const py::object extra = reader_.get(event, fields().extra_fields);
    if (extra && Py_TYPE(extra.ptr()) == allocation_type_) {
      add_allocation(event, extra, context);
      return;
    }
    const py::object children = list_field(event, fields().children);
    py::object name;  // outlives the children's visits, which refer to it
    if (extra && Py_TYPE(extra.ptr()) == operator_type_) name = add_operator(event, extra, children, context);
    if (children) visit_all(children, context);
  }

  // The topmost operator with a schema that accepts its inputs, or a backward function, starts
  // a data-flow node that everything it calls belongs to. Returns the operator's name.
  py::object add_operator(py::handle event, const py::object& extra, const py::object& children, Context& context) {
    const TreeFields& f = fields();
    py::object name = reader_.get(event, f.name);
    const std::string_view text = name ? text_of(name, f.name) : std::string_view();
    bool backward_function = false;
    if (context.node < 0) {
      backward_function = reader_.get_int(extra, f.scope) == kBackwardFunctionScope;
      context.in_backward |= backward_function;
    }
    context.op_name = name ? name.ptr() : nullptr;
    // Inputs matter to a node, and to an operator that may start one (a schema needs "::").
    if (context.node < 0 && !backward_function && text.find("::") == std::string_view::npos) return name;
    const OperatorInputs inputs = read_inputs(extra);
    note_sightings(inputs);
    const std::optional<std::vector<bool>>* writes = &no_schema_;
    if (text.find("::") != std::string_view::npos) writes = &write_flags(text, inputs.kinds);
    if (context.node < 0 && (backward_function || *writes)) {
      const std::optional<int64_t> begin_ns = reader_.get_int(event, f.start_time_ns);
      if (begin_ns) {
        context.node = static_cast<int64_t>(events_.nodes.size());
        events_.nodes.push_back({to_monotonic(*begin_ns), context.in_backward, {}, {}});
      }
    }
    if (context.node >= 0) add_inputs(inputs, *writes, events_.nodes[context.node]);
    if (backward_function && text == "torch::autograd::AccumulateGrad" && children) note_new_gradient(children);
    return name;
  }

  OperatorInputs read_inputs(py::handle extra) {
    OperatorInputs inputs;
    inputs.list = list_field(extra, fields().inputs);
    if (!inputs.list) return inputs;
    const Py_ssize_t size = PySequence_Fast_GET_SIZE(inputs.list.ptr());
    PyObject** const items = PySequence_Fast_ITEMS(inputs.list.ptr());
    inputs.kinds.reserve(size);
    for (Py_ssize_t i = 0; i < size; ++i) inputs.kinds += read_input(items[i], static_cast<uint32_t>(i), inputs);
    return inputs;
  }

  // The kind of one input; its tensors with identity are appended to `inputs`.
  char read_input(py::handle input, uint32_t position, OperatorInputs& inputs) {
    PyObject* const object = input.ptr();
    if (object == Py_None) return input_kind::kNone;
    if (PyBool_Check(object)) return input_kind::kBool;
    if (PyLong_Check(object)) return input_kind::kInt;
    if (PyFloat_Check(object)) return input_kind::kFloat;
    if (PyComplex_Check(object)) return input_kind::kComplex;
    if (PyList_Check(object)) {
      bool all_tensors = true;
      for (Py_ssize_t i = 0; i < PyList_GET_SIZE(object); ++i) {
        all_tensors &= read_tensor(PyList_GET_ITEM(object, i), position, inputs);
      }
      return all_tensors ? input_kind::kTensorList : input_kind::kOtherList;
    }
    if (Py_TYPE(object) != tensor_metadata_type_) return input_kind::kOther;
    return read_tensor(input, position, inputs) ? input_kind::kTensor : input_kind::kNone;
  }

  // Appends a _TensorMetadata with an identity (tensor id, allocation id, data pointer) to
  // `inputs`; false for anything else.
  bool read_tensor(py::handle tensor, uint32_t position, OperatorInputs& inputs) {
    const TreeFields& f = fields();
    if (Py_TYPE(tensor.ptr()) != tensor_metadata_type_) return false;
    const std::optional<int64_t> id = int_or_none(tensor, f.id);
    const std::optional<int64_t> allocation_id = id ? int_or_none(tensor, f.allocation_id) : std::nullopt;
    const std::optional<int64_t> ptr = allocation_id ? int_or_none(tensor, f.storage_data_ptr) : std::nullopt;
    if (!ptr) return false;
    inputs.tensors.push_back({{*id, *allocation_id}, static_cast<uint64_t>(*ptr), tensor});
    inputs.input_of_tensor.push_back(position);
    return true;
  }

  void add_inputs(const OperatorInputs& inputs, const std::optional<std::vector<bool>>& writes, FlowNode& node) {
    for (size_t i = 0; i < inputs.tensors.size(); ++i) {
      const uint32_t position = inputs.input_of_tensor[i];
      const Write write = !writes ? Write::kUnknown : (*writes)[position] ? Write::kYes : Write::kNo;
      node.inputs.push_back({storage_of(inputs.tensors[i]), write});
    }
  }

  // AccumulateGrad either detaches a new gradient or adds into the existing one (aten::detach or
  // aten::add_ first): that tensor is the gradient.
  void note_new_gradient(const py::object& children) {
    const TreeFields& f = fields();
    if (PySequence_Fast_GET_SIZE(children.ptr()) == 0) return;
    const py::handle first = PySequence_Fast_GET_ITEM(children.ptr(), 0);
    const py::object extra = reader_.get(first, f.extra_fields);
    if (!extra || Py_TYPE(extra.ptr()) != operator_type_) return;
    const py::object name = reader_.get(first, f.name);
    const std::string_view text = name ? text_of(name, f.name) : std::string_view();
    if (text != "aten::detach" && text != "aten::add_") return;
    const OperatorInputs inputs = read_inputs(extra);
    if (inputs.tensors.empty() || inputs.input_of_tensor[0] != 0 || inputs.kinds[0] != input_kind::kTensor) return;
    events_.known_roles.push_back({storage_of(inputs.tensors[0]), memory::Category::kGradient});
  }

  void add_allocation(py::handle event, const py::object& extra, const Context& context) {
    const TreeFields& f = fields();
    const std::optional<int64_t> time_ns = reader_.get_int(event, f.start_time_ns);
    const std::optional<int64_t> torch_tid = reader_.get_int(event, f.start_tid);
    const std::optional<int64_t> ptr = reader_.get_int(extra, f.ptr);
    const std::optional<int64_t> bytes = reader_.get_int(extra, f.alloc_size);
    const std::optional<int64_t> total_allocated = reader_.get_int(extra, f.total_allocated);
    const std::optional<int64_t> total_reserved = reader_.get_int(extra, f.total_reserved);
    const std::optional<Device> device = device_of(extra);
    if (!time_ns || !torch_tid || !ptr || !bytes || !total_allocated || !total_reserved || !device) {
      ++skipped_events_;
      return;
    }
    Allocation allocation;
    allocation.time_ns = to_monotonic(*time_ns);
    allocation.ptr = static_cast<uint64_t>(*ptr);
    allocation.bytes = *bytes;
    allocation.total_allocated = *total_allocated;
    allocation.total_reserved = *total_reserved;
    allocation.device = *device;
    allocation.op = op_name_id(context.op_name);
    const std::optional<int64_t> id = int_or_none(extra, f.id);
    const std::optional<int64_t> allocation_id = id ? int_or_none(extra, f.allocation_id) : std::nullopt;
    if (allocation_id) {
      allocation.storage = storage_index({*id, *allocation_id}, allocation.ptr, [&] { return device; });
      if (allocation.bytes > 0 && allocation.time_ns >= window_begin_ns_) allocated_[allocation.storage] = true;
    }
    const uint32_t index = static_cast<uint32_t>(events_.allocations.size());
    events_.allocations.push_back(allocation);
    torch_tids_.push_back(*torch_tid);
    if (context.node >= 0) {
      events_.nodes[context.node].allocations.push_back(index);
    } else {
      events_.nodes.push_back({allocation.time_ns, context.in_backward, {}, {index}});
    }
  }

  int32_t storage_of(const TensorInput& tensor) {
    return storage_index(tensor.key, tensor.ptr, [&] { return device_of(tensor.metadata); });
  }

  // A storage without an allocation event in the window is as large as its tensors reach
  // (torch.profiler's estimate, from every operator input): the metadata of each tensor input is
  // kept until the end, unless its storage's allocation in the window was read already.
  void note_sightings(const OperatorInputs& inputs) {
    for (const TensorInput& tensor : inputs.tensors) {
      const auto found = storages_.find(tensor.key);
      if (found != storages_.end() && allocated_[found->second]) continue;
      sightings_.emplace_back(tensor.key, py::reinterpret_borrow<py::object>(tensor.metadata));
    }
  }

  // The device is read only for a storage not seen before.
  template <typename ReadDevice>
  int32_t storage_index(StorageKey key, uint64_t ptr, ReadDevice&& read_device) {
    const auto [it, added] = storages_.emplace(key, static_cast<int32_t>(events_.storages.size()));
    if (added) {
      events_.storages.push_back({key.tensor_id, ptr, read_device().value_or(Device{}), 0});
      allocated_.push_back(false);
    }
    return it->second;
  }

  // Storages without an allocation event in the window get what their tensors were seen to span
  // (the most).
  void size_unallocated_storages() {
    for (const auto& [key, metadata] : sightings_) {
      const auto found = storages_.find(key);
      if (found == storages_.end() || allocated_[found->second]) continue;
      memory::Storage& storage = events_.storages[found->second];
      storage.bytes = std::max(storage.bytes, bytes_spanned(metadata));
    }
    sightings_.clear();
  }

  // What a strided tensor's sizes and strides reach into its storage (torch.profiler's estimate
  // for storages allocated before profiling); 0 for other layouts and unreadable metadata.
  int64_t bytes_spanned(py::handle tensor) {
    const TreeFields& f = fields();
    const py::object layout = reader_.get(tensor, f.layout);
    const int strided = layout ? PyObject_RichCompareBool(layout.ptr(), strided_.ptr(), Py_EQ) : 0;
    if (strided < 0) reader_.note_failure(f.layout);
    if (strided != 1) return 0;
    const py::object sizes = list_field(tensor, f.sizes);
    const py::object strides = list_field(tensor, f.strides);
    const std::optional<int64_t> itemsize = itemsize_of(tensor);
    if (!sizes || !strides || !itemsize) return 0;
    const Py_ssize_t dims = std::min(PySequence_Fast_GET_SIZE(sizes.ptr()), PySequence_Fast_GET_SIZE(strides.ptr()));
    int64_t elements = PySequence_Fast_GET_SIZE(sizes.ptr()) == 0 ? 1 : 0;
    for (Py_ssize_t i = 0; i < dims; ++i) {
      const std::optional<int64_t> size = reader_.int_of(PySequence_Fast_GET_ITEM(sizes.ptr(), i), f.sizes);
      const std::optional<int64_t> stride = reader_.int_of(PySequence_Fast_GET_ITEM(strides.ptr(), i), f.strides);
      if (!size || !stride) return 0;
      elements = std::max(elements, *size * *stride);
    }
    return elements * *itemsize;
  }

  // dtype.itemsize, once per dtype (they are singletons).
  std::optional<int64_t> itemsize_of(py::handle tensor) {
    const TreeFields& f = fields();
    const py::object dtype = reader_.get(tensor, f.dtype);
    if (!dtype) return std::nullopt;
    const auto found = itemsizes_.find(dtype.ptr());
    if (found != itemsizes_.end()) return found->second;
    const std::optional<int64_t> itemsize = reader_.get_int(dtype, f.itemsize);
    if (itemsize) itemsizes_.emplace(dtype.ptr(), *itemsize);
    dtypes_.push_back(dtype);  // keeps the key alive
    return itemsize;
  }

  // The device of an allocation or tensor: a few distinct ones, each read in full once.
  std::optional<Device> device_of(py::handle owner) {
    const TreeFields& f = fields();
    const py::object device = reader_.get(owner, f.device);
    if (!device) return std::nullopt;
    for (const auto& [known, value] : devices_) {
      const int same = PyObject_RichCompareBool(device.ptr(), known.ptr(), Py_EQ);
      if (same < 0) PyErr_Clear();  // not comparable: read in full below
      if (same == 1) return value;
    }
    const py::object type = reader_.get(device, f.type);
    const std::optional<int64_t> index = int_or_none(device, f.index);
    if (!type) return std::nullopt;
    const int cuda = PyUnicode_Check(type.ptr()) ? PyUnicode_CompareWithASCIIString(type.ptr(), "cuda") == 0 : -1;
    if (cuda < 0) {
      reader_.note_failure(f.type);
      return std::nullopt;
    }
    const Device value{cuda ? DeviceType::kCuda : DeviceType::kCpu, static_cast<int16_t>(index.value_or(-1))};
    devices_.emplace_back(device, value);
    return value;
  }

  // An int field that may be None: nullopt for None and after a failure (noted).
  std::optional<int64_t> int_or_none(py::handle owner, const InternedName& field) {
    const py::object value = reader_.get(owner, field);
    if (!value || value.is_none()) return std::nullopt;
    return reader_.int_of(value, field);
  }

  // A list or tuple field as a sequence to index; a null object after a failure.
  py::object list_field(py::handle owner, const InternedName& field) {
    const py::object value = reader_.get(owner, field);
    if (!value) return value;
    if (!PyList_Check(value.ptr()) && !PyTuple_Check(value.ptr())) {
      PyErr_Format(PyExc_TypeError, "expected a list, got %s", Py_TYPE(value.ptr())->tp_name);
      reader_.note_failure(field);
      return py::object();
    }
    return value;
  }

  std::string_view text_of(const py::object& text, const InternedName& field) {
    const std::optional<std::string_view> utf8 = utf8_of(text);
    if (!utf8) reader_.note_failure(field);
    return utf8.value_or(std::string_view());
  }

  StringId op_name_id(PyObject* name) {
    if (name == nullptr) return kEmptyString;
    const std::optional<std::string_view> text = utf8_of(name);
    if (!text) {
      PyErr_Clear();
      return kEmptyString;
    }
    return op_names_.intern(*text);
  }

  // Per operator name and input kinds: which inputs a schema accepting them marks as written;
  // nullopt when none accepts them.
  const std::optional<std::vector<bool>>& write_flags(std::string_view name, const std::string& kinds) {
    std::string key;
    key.reserve(name.size() + 1 + kinds.size());
    key.append(name).append(1, '\0').append(kinds);
    auto found = write_flags_cache_.find(key);
    if (found == write_flags_cache_.end()) {
      std::optional<std::vector<bool>> value;
      try {
        const py::object flags = write_flags_(py::str(name.data(), name.size()), kinds);
        if (!flags.is_none()) value = flags.cast<std::vector<bool>>();
        if (value && value->size() != kinds.size()) value.reset();
      } catch (py::error_already_set& error) {
        error.restore();  // for the failure's description
        reader_.note_failure(write_flags_name_);
      }
      found = write_flags_cache_.emplace(std::move(key), std::move(value)).first;
    }
    return found->second;
  }

  int64_t to_monotonic(int64_t unix_ns) const { return unix_ns - unix_offset_ns_; }

  const py::object write_flags_;
  const py::module_ profiler_module_;  // keeps the types below alive
  PyTypeObject* const operator_type_;
  PyTypeObject* const allocation_type_;
  PyTypeObject* const tensor_metadata_type_;
  const py::object strided_;
  const int64_t unix_offset_ns_;
  const int64_t window_begin_ns_;  // now_ns() clock: allocations before it (warm-up) size nothing
  const InternedName write_flags_name_{"write_flags"};
  const std::optional<std::vector<bool>> no_schema_;
  FieldReader reader_;
  MemoryEvents events_;
  std::vector<int64_t> torch_tids_;  // per allocation
  uint64_t skipped_events_ = 0;
  std::unordered_map<StorageKey, int32_t, StorageKeyHash> storages_;
  std::vector<bool> allocated_;  // per storage: an allocation event in the window was read
  std::vector<std::pair<StorageKey, py::object>> sightings_;  // tensor inputs of storages not (yet) allocated
  std::unordered_map<std::string, std::optional<std::vector<bool>>> write_flags_cache_;
  std::vector<std::pair<py::object, Device>> devices_;
  std::unordered_map<PyObject*, int64_t> itemsizes_;
  std::vector<py::object> dtypes_;
  StringCache op_names_;
};

// The memory events of torch's event tree, read on construction and added to the recorder once
// the OS ids of torch's threads are known. Those come from torch's operator events, which are
// read after the tree: pybind11 looks up every object torch hands out in a table of all live
// ones, and the walk of the tree is about a fifth faster before tens of thousands of operator
// events fill that table (docs/performance.md).
class TorchMemoryImport {
 public:
  TorchMemoryImport(py::object event_tree, py::object write_flags, int64_t window_begin_ns)
      : event_tree_(std::move(event_tree)) {
    TreeReader reader(std::move(write_flags), window_begin_ns);
    reader.read(event_tree_);
    events_ = reader.take();
    torch_tids_ = reader.take_torch_tids();
    skipped_events_ = reader.skipped_events();
    failed_reads_ = reader.reads().failures();
    first_failure_ = reader.reads().first_failure();
  }

  // Adds what was read to the recorder, torch's thread ids mapped by `os_thread_ids` (those not
  // in it: the calling thread's). Once only.
  py::dict add_to_recorder(const std::unordered_map<int64_t, int64_t>& os_thread_ids) {
    if (added_) throw std::logic_error("TorchMemoryImport.add_to_recorder: already added");
    added_ = true;
    const int64_t caller = current_os_tid();
    for (size_t i = 0; i < events_.allocations.size(); ++i) {
      const auto found = os_thread_ids.find(torch_tids_[i]);
      events_.allocations[i].os_tid = found == os_thread_ids.end() ? caller : found->second;
    }
    memory::sort_by_time(events_);
    const size_t count = events_.allocations.size();
    Recorder::instance().add_memory(std::move(events_));
    Recorder::instance().add_import_losses({skipped_events_, failed_reads_});
    py::dict result;
    result["allocations"] = count;
    result["skipped_events"] = skipped_events_;
    result["failed_reads"] = failed_reads_;
    result["first_failure"] = first_failure_;
    return result;
  }

 private:
  py::object event_tree_;  // torch's objects, freed with this import (see torch_capture.stop_thread)
  MemoryEvents events_;
  std::vector<int64_t> torch_tids_;  // per allocation
  uint64_t skipped_events_ = 0;
  uint64_t failed_reads_ = 0;
  std::string first_failure_;
  bool added_ = false;
};

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
  py::class_<TorchMemoryImport>(module, "TorchMemoryImport",
                                "The allocator events and operator data flow of a torch _ProfilerResult's\n"
                                "experimental_event_tree(): read on construction, added to the recorder by\n"
                                "add_to_recorder(os_thread_ids).")
      .def(py::init<py::object, py::object, int64_t>(), py::arg("event_tree"), py::arg("write_flags"),
           py::arg("window_begin_ns") = 0,
           "Read `event_tree`. write_flags(name, kinds) returns which inputs the operator writes (a\n"
           "list of bools), or None when no schema accepts inputs of those kinds (a letter per input:\n"
           "memory.INPUT_KINDS); allocations before window_begin_ns (now_ns() clock) do not size\n"
           "their storages. The tree is kept, and freed, with this object.")
      .def("add_to_recorder", &TorchMemoryImport::add_to_recorder, py::arg("os_thread_ids"),
           "Add what was read to the recorder, torch's thread ids mapped to OS ones by os_thread_ids\n"
           "(from import_torch_events; others: the caller's). Once only. Returns a dict: allocations\n"
           "(read), skipped_events (allocator events left out, unreadable), failed_reads and\n"
           "first_failure.");
  module.def("add_observed_tensors", &add_observed_tensors, py::arg("tensors"),
             "Record tensors seen in a known role: (data_ptr, device_type, device_index, now_ns,\n"
             "bytes, category) tuples; category is MEMORY_CATEGORIES' index.");
  py::list categories;
  for (size_t i = 0; i < memory::kNumCategories; ++i) {
    categories.append(std::string(memory::category_name(static_cast<memory::Category>(i))));
  }
  module.attr("MEMORY_CATEGORIES") = py::tuple(categories);
}

}  // namespace perfprof::python_hooks
