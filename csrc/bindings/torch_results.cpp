#include "bindings/torch_results.h"

#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/clock.h"
#include "export/json_text.h"
#include "record/recorder.h"

namespace py = pybind11;

namespace perfprof::bindings {
namespace {

// `[a, b, ...]`, each item written by `append_item(out, item)`.
template <typename AppendItem>
void append_list(std::string& out, py::handle items, AppendItem append_item) {
  out += '[';
  bool first = true;
  for (py::handle item : items) {
    if (!first) out += ", ";
    first = false;
    append_item(out, item);
  }
  out += ']';
}

void append_int_item(std::string& out, py::handle value) { append_int(out, value.cast<int64_t>()); }

void append_shape(std::string& out, py::handle shape) { append_list(out, shape, append_int_item); }

void append_string_item(std::string& out, py::handle text) {
  append_json_string(out, py::str(text).cast<std::string>());
}

// A double as torch prints an IValue: integral values below 1e10 as "3.", others with the 17
// significant digits that round-trip.
void append_torch_double(std::string& out, double value) {
  const int kind = std::fpclassify(value);
  if ((kind == FP_NORMAL || kind == FP_ZERO) && std::abs(value) < 1e10 &&
      static_cast<double>(static_cast<int64_t>(value)) == value) {
    append_int(out, static_cast<int64_t>(value));
    out += '.';
    return;
  }
  fmt::format_to(std::back_inserter(out), "{:.17g}", value);
}

// A non-tensor argument's value as torch.profiler writes it in "Concrete Inputs".
void append_concrete_value(std::string& out, py::handle value) {
  if (PyBool_Check(value.ptr())) {
    out += value.ptr() == Py_True ? "True" : "False";
  } else if (PyLong_Check(value.ptr())) {
    append_int_item(out, value);
  } else if (PyFloat_Check(value.ptr())) {
    append_torch_double(out, value.cast<double>());
  } else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    append_list(out, value, append_concrete_value);
  } else {
    out += py::str(value).cast<std::string>();
  }
}

// A tensor input's concrete value is written as "".
void append_concrete_input(std::string& out, py::handle value) {
  std::string text;
  if (!value.is_none()) append_concrete_value(text, value);
  append_json_string(out, text);
}

// The members torch.profiler writes for an operator recorded with shapes.
std::string input_args(py::handle event) {
  std::string args = "\"Input Dims\": ";
  append_list(args, event.attr("shapes")(), append_shape);
  args += ", \"Input type\": ";
  append_list(args, event.attr("dtypes")(), append_string_item);
  args += ", \"Input Strides\": ";
  append_list(args, event.attr("structured_input_strides")(), append_shape);
  args += ", \"Concrete Inputs\": ";
  append_list(args, event.attr("concrete_inputs")(), append_concrete_input);
  return args;
}

// One range per CPU operator or user annotation of `events` (a torch _ProfilerResult's
// events()), with its inputs if asked; memory and Python events are left to their own readers.
py::tuple import_torch_events(py::iterable events, bool with_inputs) {
  static const StringId cpu_op = global_strings().intern("cpu_op");
  static const StringId user_annotation = global_strings().intern("user_annotation");
  const int64_t unix_offset_ns = monotonic_to_unix_offset_ns();
  std::vector<CompletedRange> ranges;
  py::dict os_thread_ids;  // torch's own thread ids -> OS thread ids
  for (py::handle event : events) {
    if (event.attr("is_python_function")().cast<bool>()) continue;
    const std::string name = event.attr("name")().cast<std::string>();
    if (name == "[memory]" || name == "[OutOfMemory]") continue;
    CompletedRange range;
    range.os_tid = event.attr("device_resource_id")().cast<int64_t>();
    os_thread_ids[event.attr("start_thread_id")()] = range.os_tid;
    range.begin_ns = event.attr("start_ns")().cast<int64_t>() - unix_offset_ns;
    range.end_ns = event.attr("end_ns")().cast<int64_t>() - unix_offset_ns;
    range.name = global_strings().intern(name);
    range.category = event.attr("is_user_annotation")().cast<bool>() ? user_annotation : cpu_op;
    if (with_inputs) range.args = global_strings().intern(input_args(event));
    range.sequence = event.attr("sequence_nr")().cast<int64_t>();
    ranges.push_back(range);
  }
  const size_t count = ranges.size();
  Recorder::instance().add_completed(std::move(ranges));
  return py::make_tuple(count, os_thread_ids);
}

}  // namespace

void add_torch_results(py::module_& module) {
  module.def("import_torch_events", &import_torch_events, py::arg("events"), py::arg("with_inputs") = true,
             "Add the CPU operators of torch.autograd._disable_profiler().events() to the recorder;\n"
             "returns how many, and a dict from torch's thread ids to OS thread ids.");
}

}  // namespace perfprof::bindings
