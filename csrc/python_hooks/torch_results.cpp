#include "python_hooks/torch_results.h"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "python_hooks/py_fields.h"
#include "common/clock.h"
#include "common/json_text.h"
#include "record/recorder.h"

namespace py = pybind11;

namespace perfprof::python_hooks {
namespace {

// The methods of torch's KinetoEvent that are read.
struct EventMethods {
  InternedName name{"name"};
  InternedName start_ns{"start_ns"};
  InternedName end_ns{"end_ns"};
  InternedName os_thread{"device_resource_id"};
  InternedName torch_thread{"start_thread_id"};
  InternedName user_annotation{"is_user_annotation"};
  InternedName sequence{"sequence_nr"};
  InternedName forward_thread{"fwd_thread_id"};
  InternedName shapes{"structured_input_shapes"};
  InternedName dtypes{"dtypes"};
  InternedName strides{"structured_input_strides"};
  InternedName concrete_inputs{"concrete_inputs"};
  InternedName keyword_inputs{"kwinputs"};
};

const EventMethods& methods() {
  static const EventMethods* const instance = new EventMethods();  // needs the GIL: built on first import
  return *instance;
}

bool is_sequence(py::handle value) { return PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()); }

// `[a, b, ...]`, each item written by `append_item(out, item)`; false when an item could not be.
template <typename AppendItem>
bool append_list(std::string& out, py::handle items, AppendItem&& append_item) {
  if (!is_sequence(items)) return false;
  PyObject* const sequence = items.ptr();
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
  PyObject** const item = PySequence_Fast_ITEMS(sequence);
  out += '[';
  for (Py_ssize_t i = 0; i < size; ++i) {
    if (i > 0) out += ", ";
    if (!append_item(out, py::handle(item[i]))) return false;
  }
  out += ']';
  return true;
}

// Shapes and strides: ints in lists nested to any depth (a TensorList input is a list of shapes).
bool append_int_tree(IntTree& tree, py::handle value) {
  if (is_sequence(value)) {
    PyObject* const sequence = value.ptr();
    const Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    PyObject** const item = PySequence_Fast_ITEMS(sequence);
    tree.push_back({size, true});
    for (Py_ssize_t i = 0; i < size; ++i) {
      if (!append_int_tree(tree, py::handle(item[i]))) return false;
    }
    return true;
  }
  if (!PyLong_Check(value.ptr())) return false;
  const long long number = PyLong_AsLongLong(value.ptr());
  if (number == -1 && PyErr_Occurred()) return false;
  tree.push_back({number, false});
  return true;
}

// A double as torch prints a scalar IValue: integral values that fit in int64 as "3." (negative
// zero as "0."), others with the 17 significant digits that round-trip ("0.10000000000000001").
void append_torch_double(std::string& out, double value) {
  constexpr double kInt64Bound = 9223372036854775808.0;  // 2^63
  if (std::isfinite(value) && value >= -kInt64Bound && value < kInt64Bound &&
      static_cast<double>(static_cast<int64_t>(value)) == value) {
    append_int(out, static_cast<int64_t>(value));
    out += '.';
    return;
  }
  fmt::format_to(std::back_inserter(out), "{:.17g}", value);
}

// A non-tensor argument's value as torch.profiler writes it in "Concrete Inputs".
bool append_concrete_value(std::string& out, py::handle value) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object)) {
    out += object == Py_True ? "True" : "False";
  } else if (PyFloat_Check(object)) {
    append_torch_double(out, PyFloat_AS_DOUBLE(object));
  } else if (is_sequence(value)) {
    return append_list(out, value, append_concrete_value);
  } else {
    // ints of any size, and whatever else a newer torch may hand out, as Python prints them.
    const py::object text = py::reinterpret_steal<py::object>(PyObject_Str(object));
    const auto utf8 = text ? utf8_of(text) : std::nullopt;
    if (!utf8) return false;
    out += *utf8;
  }
  return true;
}

// A recorded argument is written as its value; a tensor or an unrecorded one (None) as "".
std::optional<std::string> concrete_input_text(py::handle value) {
  std::string text;
  if (!value.is_none() && !append_concrete_value(text, value)) return std::nullopt;
  return text;
}

// A keyword input's value as its KeywordValue type and its text; nothing for another kind of value.
std::optional<std::string> keyword_value_text(py::handle value) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object)) return fmt::format("{}{}", static_cast<char>(KeywordValue::Bool), object == Py_True);
  if (PyLong_Check(object)) {
    const long long number = PyLong_AsLongLong(object);
    if (number == -1 && PyErr_Occurred()) {
      PyErr_Clear();  // beyond int64: torch cannot record it either
      return std::nullopt;
    }
    return fmt::format("{}{}", static_cast<char>(KeywordValue::Int), number);
  }
  if (PyFloat_Check(object)) return fmt::format("{}{}", static_cast<char>(KeywordValue::Float), PyFloat_AS_DOUBLE(object));
  if (PyUnicode_Check(object)) {
    const auto text = utf8_of(value);
    if (text) return fmt::format("{}{}", static_cast<char>(KeywordValue::Text), *text);
  }
  return std::nullopt;
}

// Reads torch's events into completed ranges. An event whose name, times or thread cannot be
// read is skipped; an input field that cannot be read is left out of that event's arguments.
// Both are counted, never fatal: one odd operator must not cost the others.
class EventImporter {
 public:
  EventImporter(bool with_inputs, int64_t since_ns) : with_inputs_(with_inputs), since_ns_(since_ns) {}

  void read(py::handle event) {
    const EventMethods& m = methods();
    // Warm-up steps are recorded and then dropped: the begin alone tells, one read instead of a dozen.
    const auto begin_ns = fields_.call_int(event, m.start_ns);
    if (begin_ns && *begin_ns - unix_offset_ns_ < since_ns_) return;
    const py::object name_object = fields_.call(event, m.name);
    const auto name = name_object ? utf8_of(name_object) : std::nullopt;
    if (name_object && !name) fields_.note_failure(m.name);
    if (name && (*name == "[memory]" || *name == "[OutOfMemory]")) return;  // read with the memory events
    const auto end_ns = fields_.call_int(event, m.end_ns);
    const auto os_tid = fields_.call_int(event, m.os_thread);
    if (!name || !begin_ns || !end_ns || !os_tid) {
      ++skipped_events_;
      return;
    }
    CompletedRange range;
    range.os_tid = *os_tid;
    range.begin_ns = *begin_ns - unix_offset_ns_;
    range.end_ns = *end_ns - unix_offset_ns_;
    range.imported = true;
    range.name = names_.intern(*name);
    range.kind = is_user_annotation(event) ? RangeKind::UserAnnotation : RangeKind::CpuOp;
    range.sequence = fields_.call_int(event, m.sequence).value_or(-1);
    if (with_inputs_) range.args = input_args(event);
    note_thread(event, range.os_tid);
    // torch's id of the forward pass's thread, > 0 on backward operators only.
    const int64_t forward_torch_tid = range.sequence >= 0 ? fields_.call_int(event, m.forward_thread).value_or(0) : 0;
    if (forward_torch_tid > 0) backward_ranges_.emplace_back(ranges_.size(), forward_torch_tid);
    ranges_.push_back(range);
  }

  // Backward operators name their forward thread by torch's id, whose OS id is known once every
  // event has been read.
  std::vector<CompletedRange> take_ranges() {
    for (const auto& [row, forward_torch_tid] : backward_ranges_) {
      const auto found = os_tid_of_torch_tid_.find(forward_torch_tid);
      ranges_[row].forward_os_tid = found == os_tid_of_torch_tid_.end() ? -1 : found->second;
    }
    backward_ranges_.clear();
    return std::move(ranges_);
  }
  // torch's thread ids -> OS thread ids, for the memory reader.
  py::dict os_thread_ids() const {
    py::dict ids;
    for (const auto& [torch_tid, os_tid] : os_tid_of_torch_tid_) ids[py::int_(torch_tid)] = os_tid;
    return ids;
  }
  uint64_t skipped_events() const { return skipped_events_; }
  uint64_t failed_reads() const { return fields_.failures(); }
  const std::string& first_failure() const { return fields_.first_failure(); }

 private:
  // torch files a range under user_annotation by its RecordScope, which a "scope" keyword input
  // sets (torch.compile's "## Call CompiledFxGraph <key> ##"); keyword inputs are recorded only
  // with shapes, so without them torch.profiler files such a range under cpu_op.
  bool is_user_annotation(py::handle event) {
    const EventMethods& m = methods();
    if (!fields_.call_bool(event, m.user_annotation).value_or(false)) return false;
    if (with_inputs_) return true;
    const py::object keywords = fields_.call(event, m.keyword_inputs);
    if (!keywords || !PyDict_Check(keywords.ptr())) return true;
    return PyDict_GetItemString(keywords.ptr(), "scope") == nullptr;
  }

  // The arguments torch.profiler writes for an operator recorded with shapes, each one left out
  // if it is empty (an operator without inputs) or cannot be read.
  ArgSetId input_args(py::handle event) {
    const EventMethods& m = methods();
    args_.args.clear();
    add_input_arg(ArgKey::InputDims, event, m.shapes, read_int_tree);
    add_input_arg(ArgKey::InputTypes, event, m.dtypes, [&](py::handle items) { return read_texts(items, utf8_of); });
    add_input_arg(ArgKey::InputStrides, event, m.strides, read_int_tree);
    add_input_arg(ArgKey::ConcreteInputs, event, m.concrete_inputs,
                  [&](py::handle items) { return read_texts(items, concrete_input_text); });
    add_keyword_inputs(event);
    return args_.empty() ? kNoArgs : global_arg_sets().intern(args_);
  }

  // The keyword inputs torch recorded (_RecordFunctionFast's: grid, stream, scope...), each
  // whose value torch.profiler writes as a scalar (a text, an int, a float, a bool), as its name
  // and its typed text (ArgKey::KeywordInputs). A list of texts, which torch writes too, is left
  // out.
  void add_keyword_inputs(py::handle event) {
    const py::object keywords = fields_.call(event, methods().keyword_inputs);
    if (!keywords || !PyDict_Check(keywords.ptr()) || PyDict_GET_SIZE(keywords.ptr()) == 0) return;
    std::vector<StringId> pairs;
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    Py_ssize_t position = 0;
    while (PyDict_Next(keywords.ptr(), &position, &key, &value)) {
      const auto name = utf8_of(key);
      const auto text = keyword_value_text(value);
      if (!name || !text) continue;
      pairs.push_back(input_texts_.intern(*name));
      pairs.push_back(input_texts_.intern(*text));
    }
    if (!pairs.empty()) args_.args.push_back({ArgKey::KeywordInputs, std::move(pairs)});
  }

  template <typename ReadValue>
  void add_input_arg(ArgKey key, py::handle event, const InternedName& method, ReadValue&& read_value) {
    const py::object items = fields_.call(event, method);
    if (!items) return;
    if (is_sequence(items) && PyObject_Length(items.ptr()) == 0) return;  // torch writes no empty member
    std::optional<ArgValue> value = read_value(items);
    if (value) {
      args_.args.push_back({key, std::move(*value)});
    } else {
      fields_.note_failure(method);
    }
  }

  static std::optional<ArgValue> read_int_tree(py::handle items) {
    IntTree tree;
    if (!is_sequence(items) || !append_int_tree(tree, items)) return std::nullopt;
    return tree;
  }

  // One text per item, each as `text_of(item)` gives it (nothing: unreadable).
  template <typename TextOf>
  std::optional<ArgValue> read_texts(py::handle items, TextOf&& text_of) {
    if (!is_sequence(items)) return std::nullopt;
    PyObject* const sequence = items.ptr();
    const Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    PyObject** const item = PySequence_Fast_ITEMS(sequence);
    std::vector<StringId> texts;
    texts.reserve(static_cast<size_t>(size));
    for (Py_ssize_t i = 0; i < size; ++i) {
      const auto text = text_of(py::handle(item[i]));
      if (!text) return std::nullopt;
      texts.push_back(input_texts_.intern(*text));
    }
    return texts;
  }

  // torch names threads by its own ids, the trace by OS ids; the memory reader needs the map,
  // and so do backward operators.
  void note_thread(py::handle event, int64_t os_tid) {
    if (!seen_os_threads_.insert(os_tid).second) return;
    const auto torch_tid = fields_.call_int(event, methods().torch_thread);
    if (torch_tid) os_tid_of_torch_tid_[*torch_tid] = os_tid;
  }

  const bool with_inputs_;
  const int64_t since_ns_;
  const int64_t unix_offset_ns_ = monotonic_to_unix_offset_ns();
  FieldReader fields_;
  StringCache names_;
  StringCache input_texts_;  // most operators repeat their inputs step after step
  ArgSet args_;
  std::vector<CompletedRange> ranges_;
  std::vector<std::pair<size_t, int64_t>> backward_ranges_;  // (row, torch's forward thread id)
  std::unordered_set<int64_t> seen_os_threads_;
  std::unordered_map<int64_t, int64_t> os_tid_of_torch_tid_;
  uint64_t skipped_events_ = 0;
};

// One range per CPU operator or user annotation of `events` (a torch _ProfilerResult's
// events()) begun at `since_ns` (now_ns() clock) or later, with its inputs if asked; memory
// events are left to their own reader.
py::dict import_torch_events(py::iterable events, bool with_inputs, int64_t since_ns) {
  EventImporter importer(with_inputs, since_ns);
  {
    const GcPause no_collections_while_reading;
    for (py::handle event : events) importer.read(event);
  }
  std::vector<CompletedRange> ranges = importer.take_ranges();
  const size_t count = ranges.size();
  Recorder::instance().add_completed(std::move(ranges));
  Recorder::instance().add_import_losses({importer.skipped_events(), importer.failed_reads()});
  py::dict result;
  result["imported"] = count;
  result["os_thread_ids"] = importer.os_thread_ids();
  result["skipped_events"] = importer.skipped_events();
  result["failed_reads"] = importer.failed_reads();
  result["first_failure"] = importer.first_failure();
  return result;
}

}  // namespace

void add_torch_results(py::module_& module) {
  module.def("import_torch_events", &import_torch_events, py::arg("events"), py::arg("with_inputs") = true,
             py::arg("since_ns") = 0,
             "Add the CPU operators of torch.autograd._disable_profiler().events() begun at since_ns\n"
             "(now_ns() clock) or later to the recorder.\n"
             "Returns a dict: imported (ranges added), os_thread_ids (torch's thread ids -> OS ids),\n"
             "skipped_events (unreadable, left out), failed_reads (fields left out, events skipped\n"
             "included) and first_failure (what the first failed read raised, or '').");
}

}  // namespace perfprof::python_hooks
