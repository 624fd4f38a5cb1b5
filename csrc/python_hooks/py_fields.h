#pragma once
// Reading many fields of Python objects from C++ quickly and without letting one bad field stop
// the rest. Used where perfprof reads what torch's profiler recorded: tens of thousands of
// objects, a dozen fields each, at the stop of a profiling session that the user waits for.
//
// pybind11's `obj.attr("name")()` builds a new str for the name and goes through pybind11's
// call machinery on every read. Here names are interned once and methods are called through the
// vectorcall protocol; results are plain PyObject references in pybind11 handles (RAII).
// Every failure is counted and the first one kept, so the caller can name it in one warning.
#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perfprof::python_hooks {

// Switches Python's cyclic garbage collector off for its lifetime (if it was on). Reading
// torch's results creates and drops hundreds of thousands of short-lived lists without a cycle
// among them; left on, the collector would run over and over (measured: 12% of the import).
class GcPause {
 public:
  GcPause() : was_enabled_(PyGC_Disable() == 1) {}
  ~GcPause() {
    if (was_enabled_) PyGC_Enable();
  }
  GcPause(const GcPause&) = delete;
  GcPause& operator=(const GcPause&) = delete;

 private:
  bool was_enabled_;
};

// An attribute name interned on construction (the GIL must be held) and kept for the process.
class InternedName {
 public:
  explicit InternedName(const char* name) : name_(PyUnicode_InternFromString(name)), text_(name) {}
  PyObject* get() const { return name_; }
  const char* text() const { return text_; }

 private:
  PyObject* name_;  // immortal in practice: never released, like CPython's own interned names
  const char* text_;
};

// The UTF-8 text of a str, valid while `text` lives; nullopt (error set) for anything else.
inline std::optional<std::string_view> utf8_of(pybind11::handle text) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_Check(text.ptr()) ? PyUnicode_AsUTF8AndSize(text.ptr(), &size) : nullptr;
  if (data == nullptr) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "expected str, got %s", Py_TYPE(text.ptr())->tp_name);
    return std::nullopt;
  }
  return std::string_view(data, static_cast<size_t>(size));
}

// Calls methods, reads attributes and converts their results, counting every read that raised
// or returned something of another type. The Python error of a failed read is cleared after it
// is noted.
class FieldReader {
 public:
  // obj.method(): the result, or a null object after a failure.
  pybind11::object call(pybind11::handle obj, const InternedName& method) {
    PyObject* args[] = {obj.ptr()};
    PyObject* result = PyObject_VectorcallMethod(method.get(), args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    if (result == nullptr) note_failure(method);
    return pybind11::reinterpret_steal<pybind11::object>(result);
  }

  // obj.attribute: the value, or a null object after a failure.
  pybind11::object get(pybind11::handle obj, const InternedName& attribute) {
    PyObject* result = PyObject_GetAttr(obj.ptr(), attribute.get());
    if (result == nullptr) note_failure(attribute);
    return pybind11::reinterpret_steal<pybind11::object>(result);
  }

  std::optional<int64_t> call_int(pybind11::handle obj, const InternedName& method) {
    const pybind11::object value = call(obj, method);
    return value ? int_of(value, method) : std::nullopt;
  }

  std::optional<int64_t> get_int(pybind11::handle obj, const InternedName& attribute) {
    const pybind11::object value = get(obj, attribute);
    return value ? int_of(value, attribute) : std::nullopt;
  }

  // `value` (what `what` read) as an int (anything with __index__); nullopt after a failure.
  std::optional<int64_t> int_of(pybind11::handle value, const InternedName& what) {
    const long long number = PyLong_AsLongLong(value.ptr());
    if (number == -1 && PyErr_Occurred()) {
      note_failure(what);
      return std::nullopt;
    }
    return number;
  }

  std::optional<bool> call_bool(pybind11::handle obj, const InternedName& method) {
    const pybind11::object value = call(obj, method);
    if (!value) return std::nullopt;
    const int truth = PyObject_IsTrue(value.ptr());
    if (truth < 0) {
      note_failure(method);
      return std::nullopt;
    }
    return truth != 0;
  }

  // Counts a failure of the read named `what` (clearing the Python error, if one is set).
  void note_failure(const InternedName& what) { note_failure(std::string_view(what.text())); }
  void note_failure(std::string_view what) {
    ++failures_;
    if (first_failure_.empty()) first_failure_ = describe(what);
    PyErr_Clear();
  }

  uint64_t failures() const { return failures_; }
  // "name: ExceptionType: message" of the first failure, or "" when none.
  const std::string& first_failure() const { return first_failure_; }

 private:
  // `what`, then the pending Python error as "Type: message" (pybind11 fetches and clears it).
  static std::string describe(std::string_view what) {
    std::string text(what);
    if (PyErr_Occurred()) {
      const pybind11::error_already_set error;
      text += ": ";
      text += error.what();
    }
    return text;
  }

  uint64_t failures_ = 0;
  std::string first_failure_;
};

}  // namespace perfprof::python_hooks
