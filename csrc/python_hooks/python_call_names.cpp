#include "python_hooks/python_call_names.h"

#include <cstddef>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "python_hooks/module_calls.h"

namespace perfprof::python_hooks {
namespace {

constexpr int kStartOffset = -1;  // the offset key of a call from the start

struct CodeAt {
  PyCodeObject* code;
  int offset;
  bool operator==(const CodeAt& other) const { return code == other.code && offset == other.offset; }
};

struct CodeAtHash {
  size_t operator()(const CodeAt& key) const noexcept {
    return std::hash<const void*>()(key.code) ^ (static_cast<size_t>(key.offset) * 0x9e3779b97f4a7c15ULL);
  }
};

struct Names {
  NamingRules rules;
  // Each key holds a reference to its code object, so an address is never reused for other code.
  std::unordered_map<CodeAt, StringId, CodeAtHash> code_names;
  std::unordered_map<const PyMethodDef*, StringId> builtin_names;  // this session's
};

Names& names() {
  static Names& state = *new Names();  // never destroyed: calls may be traced at exit
  return state;
}

void drop_code_names(Names& state) {
  for (auto& [key, name] : state.code_names) Py_DECREF(key.code);
  state.code_names.clear();
}

std::string_view without_path_prefix(std::string_view file, const std::vector<std::string>& prefixes) {
  for (const std::string& prefix : prefixes) {
    if (file.substr(0, prefix.size()) == prefix) return file.substr(prefix.size());
  }
  return file;
}

StringId name_code(PyCodeObject* code, int line) {
  const Names& state = names();
  if (is_module_call(code)) return kModuleCall;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const char* function = PyUnicode_AsUTF8(code->co_name);
  if (!file || !function) {
    PyErr_Clear();
    return kUnnamed;
  }
  const std::string_view path(file);
  const std::string& own = state.rules.own_prefix;
  if (!own.empty() && path.substr(0, own.size()) == own) return kOwnCode;
  return global_strings().intern(fmt::format("{}({}): {}", without_path_prefix(path, state.rules.path_prefixes),
                                             line, function));
}

// The frame's `self` (a new reference), or null with no exception set.
PyObject* frame_self(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* self = PyFrame_GetVarString(frame, "self");
#else
  PyObject* locals = PyObject_GetAttrString(reinterpret_cast<PyObject*>(frame), "f_locals");
  PyObject* self = locals ? PyMapping_GetItemString(locals, "self") : nullptr;
  Py_XDECREF(locals);
#endif
  if (!self) PyErr_Clear();
  return self;
}

}  // namespace

void set_naming_rules(NamingRules rules) {
  Names& state = names();
  if (rules.own_prefix == state.rules.own_prefix && rules.path_prefixes == state.rules.path_prefixes &&
      rules.module_call_code == state.rules.module_call_code) {
    return;
  }
  drop_code_names(state);
  Py_XINCREF(rules.module_call_code);
  Py_XDECREF(state.rules.module_call_code);  // held while it is compared with
  state.rules = std::move(rules);
}

void new_naming_session() { names().builtin_names.clear(); }

StringId cached_code_name(PyCodeObject* code, int offset) {
  const auto& cache = names().code_names;
  const auto it = cache.find({code, offset});
  return it == cache.end() ? kUnnamed : it->second;
}

StringId add_code_name(PyCodeObject* code, int offset, int line) {
  const StringId name = name_code(code, line);
  if (names().code_names.emplace(CodeAt{code, offset}, name).second) Py_INCREF(code);
  return name;
}

bool is_module_call(PyCodeObject* code) {
  return code != nullptr && reinterpret_cast<PyObject*>(code) == names().rules.module_call_code;
}

StringId started_code_name(PyCodeObject* code) {
  return resumed_code_name(code, kStartOffset, [code] { return code->co_firstlineno; });
}

StringId code_name_at_line(PyCodeObject* code, int line) { return name_code(code, line); }

StringId module_frame_name(PyFrameObject* frame) {
  PyObject* self = frame_self(frame);
  if (!self) return kUnnamed;
  const StringId name = module_call_name(self);
  Py_DECREF(self);
  return name;
}

// As CPython's repr of a built-in function or method object (meth_repr), whose format is the same
// from 3.10 to 3.13.
StringId builtin_name(const PyMethodDef* method, PyObject* self) {
  auto& cache = names().builtin_names;
  if (auto it = cache.find(method); it != cache.end()) return it->second;
  const StringId name = global_strings().intern(
      self == nullptr || PyModule_Check(self)
          ? fmt::format("<built-in function {}>", method->ml_name)
          : fmt::format("<built-in method {} of {} object at {}>", method->ml_name, Py_TYPE(self)->tp_name,
                        fmt::ptr(self)));
  cache.emplace(method, name);
  return name;
}

}  // namespace perfprof::python_hooks
