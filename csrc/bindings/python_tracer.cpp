#include "bindings/python_tracer.h"

#include <frameobject.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bindings/c_function.h"
#include "record/recorder.h"

namespace perfprof::bindings {
namespace {

constexpr StringId kNotTraced = UINT32_MAX;  // perfprof's own functions

// Caches valid under the GIL (the hook always runs with it held).
struct TracerState {
  std::string skip_prefix;  // functions defined under this path are not traced
  StringId category = kEmptyString;
  // Code objects are kept alive so an address is never reused for another function.
  std::unordered_map<PyCodeObject*, StringId> code_names;
  // Built-ins by (method definition, type of the bound object): bound methods are new objects
  // on every call, their definitions are not.
  std::unordered_map<const PyMethodDef*, std::unordered_map<PyTypeObject*, StringId>> builtin_names;
};

TracerState& tracer_state() {
  static TracerState& state = *new TracerState();  // never destroyed: hooks may run at exit
  return state;
}

std::vector<uint64_t>& open_calls() {
  thread_local std::vector<uint64_t> ids;  // 0: a call that is not recorded
  return ids;
}

StringId code_name(PyCodeObject* code) {
  TracerState& state = tracer_state();
  if (auto it = state.code_names.find(code); it != state.code_names.end()) return it->second;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const char* name = PyUnicode_AsUTF8(code->co_name);
  if (!file || !name) {
    PyErr_Clear();
    return kNotTraced;
  }
  const bool skipped = !state.skip_prefix.empty() && std::string_view(file).rfind(state.skip_prefix, 0) == 0;
  const StringId id = skipped ? kNotTraced
                              : global_strings().intern(fmt::format("{}({}): {}", file, code->co_firstlineno, name));
  Py_INCREF(code);
  state.code_names.emplace(code, id);
  return id;
}

// `<built-in method append of list object>`, or `<built-in function len>` without a type.
StringId builtin_name(const PyMethodDef* method, PyTypeObject* self_type) {
  auto& by_type = tracer_state().builtin_names[method];
  if (auto it = by_type.find(self_type); it != by_type.end()) return it->second;
  const StringId id = global_strings().intern(
      self_type ? fmt::format("<built-in method {} of {} object>", method->ml_name, self_type->tp_name)
                : fmt::format("<built-in function {}>", method->ml_name));
  by_type.emplace(self_type, id);
  return id;
}

// The name of a built-in callable: a function or bound method (PyCFunction), or an unbound
// method descriptor called with its object as the first argument; kNotTraced for anything else.
StringId builtin_name(PyObject* callable) {
  if (PyCFunction_Check(callable)) {
    auto* function = reinterpret_cast<PyCFunctionObject*>(callable);
    PyObject* self = function->m_self;
    return builtin_name(function->m_ml, (self == nullptr || PyModule_Check(self)) ? nullptr : Py_TYPE(self));
  }
  if (Py_IS_TYPE(callable, &PyMethodDescr_Type)) {
    auto* descriptor = reinterpret_cast<PyMethodDescrObject*>(callable);
    return builtin_name(descriptor->d_method, PyDescr_TYPE(descriptor));
  }
  return kNotTraced;
}

void begin_call(StringId name) {
  Recorder& recorder = Recorder::instance();
  uint64_t id = 0;
  if (name != kNotTraced && recorder.enabled(kChannelPython)) {
    id = Recorder::next_range_id();
    recorder.begin_range(id, name, tracer_state().category, kEmptyString);
  }
  open_calls().push_back(id);
}

void end_call() {
  std::vector<uint64_t>& ids = open_calls();
  if (ids.empty()) return;  // a function entered before the hook was installed
  const uint64_t id = ids.back();
  ids.pop_back();
  Recorder::instance().end_recorded_range(id);
}

// Built-ins called by perfprof's own code are not traced either.
StringId builtin_call_name(StringId caller, PyObject* callable) {
  return caller == kNotTraced ? kNotTraced : builtin_name(callable);
}

template <typename Record>
void guarded(Record&& record) {
  try {
    record();
  } catch (...) {
    // Out of memory: the call is not recorded; the program goes on.
  }
}

void set_options(PyObject* skip_prefix) {
  TracerState& state = tracer_state();
  state.skip_prefix = PyUnicode_AsUTF8(skip_prefix);
  state.category = global_strings().intern("python_function");
}

#if PY_VERSION_HEX >= 0x030C0000
// Python 3.12+: sys.monitoring callbacks (C functions, so CPython calls them without creating a
// frame object). Events are process-wide; each callback first checks that its thread traces.
// The events and their pairing are those CPython's own setprofile emulation uses.

thread_local bool tls_tracing = false;
int g_tool_id = -1;
int g_tracing_threads = 0;  // under the GIL

StringId code_name_or_skip(PyObject* code) {
  return PyCode_Check(code) ? code_name(reinterpret_cast<PyCodeObject*>(code)) : kNotTraced;
}

bool is_builtin(PyObject* callable) {
  return PyCFunction_Check(callable) || Py_IS_TYPE(callable, &PyMethodDescr_Type);
}

// PY_START, PY_RESUME, PY_THROW (code, offset, ...)
PyObject* on_python_start(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (tls_tracing && nargs >= 1) guarded([&] { begin_call(code_name_or_skip(args[0])); });
  Py_RETURN_NONE;
}

// PY_RETURN, PY_YIELD, PY_UNWIND (code, offset, value)
PyObject* on_python_end(PyObject*, PyObject* const*, Py_ssize_t) {
  if (tls_tracing) end_call();
  Py_RETURN_NONE;
}

// CALL (code, offset, callable, arg0)
PyObject* on_call(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (tls_tracing && nargs >= 3 && is_builtin(args[2])) {
    guarded([&] { begin_call(builtin_call_name(code_name_or_skip(args[0]), args[2])); });
  }
  Py_RETURN_NONE;
}

// C_RETURN, C_RAISE (code, offset, callable, arg0)
PyObject* on_builtin_end(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (tls_tracing && nargs >= 3 && is_builtin(args[2])) end_call();
  Py_RETURN_NONE;
}

PyMethodDef monitoring_callbacks[] = {
    {"on_python_start", as_cfunction(on_python_start), METH_FASTCALL, nullptr},
    {"on_python_end", as_cfunction(on_python_end), METH_FASTCALL, nullptr},
    {"on_call", as_cfunction(on_call), METH_FASTCALL, nullptr},
    {"on_builtin_end", as_cfunction(on_builtin_end), METH_FASTCALL, nullptr},
};

// Calls sys.monitoring.<function>(*args); a new reference, or null with an exception set.
template <typename... Args>
PyObject* call_monitoring(const char* function, const char* format, Args... args) {
  PyObject* monitoring = PySys_GetObject("monitoring");  // borrowed
  if (!monitoring) {
    PyErr_SetString(PyExc_RuntimeError, "sys.monitoring is missing");
    return nullptr;
  }
  return PyObject_CallMethod(monitoring, function, format, args...);
}

bool call_monitoring_ok(PyObject* result) {
  Py_XDECREF(result);
  return result != nullptr;
}

long monitoring_constant(const char* group, const char* name) {
  PyObject* monitoring = PySys_GetObject("monitoring");
  PyObject* holder = monitoring ? PyObject_GetAttrString(monitoring, group) : nullptr;
  PyObject* value = holder ? PyObject_GetAttrString(holder, name) : nullptr;
  const long number = value ? PyLong_AsLong(value) : -1;
  Py_XDECREF(value);
  Py_XDECREF(holder);
  return number;
}

// Each event perfprof listens to, with its callback.
const std::pair<const char*, PyMethodDef*> kEventCallbacks[] = {
    {"PY_START", &monitoring_callbacks[0]}, {"PY_RESUME", &monitoring_callbacks[0]},
    {"PY_THROW", &monitoring_callbacks[0]}, {"PY_RETURN", &monitoring_callbacks[1]},
    {"PY_YIELD", &monitoring_callbacks[1]}, {"PY_UNWIND", &monitoring_callbacks[1]},
    {"CALL", &monitoring_callbacks[2]},     {"C_RETURN", &monitoring_callbacks[3]},
    {"C_RAISE", &monitoring_callbacks[3]},
};
long g_event_mask = 0;  // the events above, as sys.monitoring numbers them

// Claims a free tool id; -1, with no exception, when every id is taken. The unassigned ids come
// first so cProfile (PROFILER_ID) can start beside perfprof.
int claim_tool_id() {
  for (int id : {3, 4, 2}) {
    PyObject* owner = call_monitoring("get_tool", "i", id);
    if (!owner) return -1;
    const bool free = owner == Py_None;
    Py_DECREF(owner);
    if (free) return call_monitoring_ok(call_monitoring("use_tool_id", "is", id, "perfprof")) ? id : -1;
  }
  return -1;
}

bool register_callbacks(int tool_id) {
  g_event_mask = 0;
  for (const auto& [event, definition] : kEventCallbacks) {
    const long event_bit = monitoring_constant("events", event);
    if (event_bit <= 0) return false;
    PyObject* callback = PyCFunction_New(definition, nullptr);
    const bool ok = callback &&
                    call_monitoring_ok(call_monitoring("register_callback", "ilO", tool_id, event_bit, callback));
    Py_XDECREF(callback);
    if (!ok) return false;
    g_event_mask |= event_bit;
  }
  return true;
}

// The last thread to stop gives the tool id back.
bool release_tool() {
  const int id = g_tool_id;
  g_tool_id = -1;
  return call_monitoring_ok(call_monitoring("free_tool_id", "i", id));
}

// Claims a tool id and registers the callbacks; false, with no exception, when every id is taken.
bool acquire_tool() {
  if (g_tool_id >= 0) return true;
  g_tool_id = claim_tool_id();
  if (g_tool_id < 0) return false;
  if (register_callbacks(g_tool_id)) return true;
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "sys.monitoring has no event perfprof needs");
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  release_tool();
  PyErr_Restore(type, value, traceback);
  return false;
}

bool set_events(bool on) {
  return call_monitoring_ok(call_monitoring("set_events", "il", g_tool_id, on ? g_event_mask : 0L));
}

PyObject* install(PyObject* skip_prefix) {
  if (tls_tracing) Py_RETURN_TRUE;
  if (!acquire_tool()) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_FALSE;  // every tool id is in use
  }
  set_options(skip_prefix);
  if (g_tracing_threads == 0 && !set_events(true)) return nullptr;
  ++g_tracing_threads;
  open_calls().clear();
  tls_tracing = true;
  Py_RETURN_TRUE;
}

PyObject* uninstall() {
  if (!tls_tracing) Py_RETURN_NONE;
  tls_tracing = false;
  open_calls().clear();
  if (--g_tracing_threads == 0 && !(set_events(false) && release_tool())) return nullptr;
  Py_RETURN_NONE;
}

#else
// Python 3.10 and 3.11: a profile hook per thread (PyEval_SetProfile).

StringId frame_name(PyFrameObject* frame) {
  PyCodeObject* code = PyFrame_GetCode(frame);
  const StringId name = code_name(code);
  Py_DECREF(code);
  return name;
}


int profile_hook(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  guarded([&] {
    switch (what) {
      case PyTrace_CALL: begin_call(frame_name(frame)); break;
      case PyTrace_C_CALL: begin_call(builtin_call_name(frame_name(frame), arg)); break;
      case PyTrace_RETURN:
      case PyTrace_C_RETURN:
      case PyTrace_C_EXCEPTION: end_call(); break;
      default: break;
    }
  });
  return 0;
}

bool hook_installed_here() { return PyThreadState_Get()->c_profilefunc == profile_hook; }

PyObject* install(PyObject* skip_prefix) {
  PyThreadState* thread = PyThreadState_Get();
  if (thread->c_profilefunc != nullptr && !hook_installed_here()) Py_RETURN_FALSE;  // cProfile & co
  set_options(skip_prefix);
  if (!hook_installed_here()) {
    open_calls().clear();
    PyEval_SetProfile(profile_hook, nullptr);
  }
  Py_RETURN_TRUE;
}

PyObject* uninstall() {
  if (hook_installed_here()) {
    PyEval_SetProfile(nullptr, nullptr);
    open_calls().clear();
  }
  Py_RETURN_NONE;
}
#endif

PyObject* python_tracer_install(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "python_tracer_install(skip_prefix: str)");
    return nullptr;
  }
  if (!PyUnicode_AsUTF8(args[0])) return nullptr;
  return install(args[0]);
}

PyObject* python_tracer_uninstall(PyObject*, PyObject* const*, Py_ssize_t) { return uninstall(); }

PyMethodDef tracer_methods[] = {
    {"python_tracer_install", as_cfunction(python_tracer_install), METH_FASTCALL,
     "python_tracer_install(skip_prefix)\n--\n\n"
     "Trace Python calls on the calling thread (recorded while the Python channel is on).\n"
     "Returns False, installing nothing, when another profile hook (e.g. cProfile) is set\n"
     "(Python < 3.12), or when every sys.monitoring tool id is taken (3.12+)."},
    {"python_tracer_uninstall", as_cfunction(python_tracer_uninstall), METH_FASTCALL,
     "python_tracer_uninstall()\n--\n\nRemove perfprof's hook from the calling thread."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool add_python_tracer(PyObject* module) { return PyModule_AddFunctions(module, tracer_methods) == 0; }

}  // namespace perfprof::bindings
