#include "bindings/python_tracer.h"

#include <frameobject.h>

#include <string>
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

StringId builtin_name(PyObject* callable) {
  if (!PyCFunction_Check(callable)) return kNotTraced;
  auto* function = reinterpret_cast<PyCFunctionObject*>(callable);
  PyObject* self = function->m_self;
  PyTypeObject* self_type = (self == nullptr || PyModule_Check(self)) ? nullptr : Py_TYPE(self);
  auto& by_type = tracer_state().builtin_names[function->m_ml];
  if (auto it = by_type.find(self_type); it != by_type.end()) return it->second;
  const char* name = function->m_ml->ml_name;
  const std::string text = self_type ? fmt::format("<built-in method {} of {} object>", name, self_type->tp_name)
                                     : fmt::format("<built-in function {}>", name);
  const StringId id = global_strings().intern(text);
  by_type.emplace(self_type, id);
  return id;
}

StringId frame_name(PyFrameObject* frame) {
  PyCodeObject* code = PyFrame_GetCode(frame);
  const StringId name = code_name(code);
  Py_DECREF(code);
  return name;
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
  if (id != 0 && Recorder::instance().channels() != 0) Recorder::instance().end_range(id);
}

int profile_hook(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  try {
    switch (what) {
      case PyTrace_CALL: begin_call(frame_name(frame)); break;
      case PyTrace_C_CALL:  // built-ins called by perfprof's own code are not traced either
        begin_call(frame_name(frame) == kNotTraced ? kNotTraced : builtin_name(arg));
        break;
      case PyTrace_RETURN:
      case PyTrace_C_RETURN:
      case PyTrace_C_EXCEPTION: end_call(); break;
      default: break;
    }
  } catch (...) {
    // Out of memory: the call is not recorded; the program goes on.
  }
  return 0;
}

bool hook_installed_here() { return PyThreadState_Get()->c_profilefunc == profile_hook; }

PyObject* python_tracer_install(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "python_tracer_install(skip_prefix: str)");
    return nullptr;
  }
  const char* prefix = PyUnicode_AsUTF8(args[0]);
  if (!prefix) return nullptr;
  PyThreadState* thread = PyThreadState_Get();
  if (thread->c_profilefunc != nullptr && !hook_installed_here()) Py_RETURN_FALSE;  // cProfile & co
  TracerState& state = tracer_state();
  state.skip_prefix = prefix;
  state.category = global_strings().intern("python_function");
  if (!hook_installed_here()) {
    open_calls().clear();
    PyEval_SetProfile(profile_hook, nullptr);
  }
  Py_RETURN_TRUE;
}

PyObject* python_tracer_uninstall(PyObject*, PyObject* const*, Py_ssize_t) {
  if (hook_installed_here()) {
    PyEval_SetProfile(nullptr, nullptr);
    open_calls().clear();
  }
  Py_RETURN_NONE;
}

PyMethodDef tracer_methods[] = {
    {"python_tracer_install", as_cfunction(python_tracer_install), METH_FASTCALL,
     "python_tracer_install(skip_prefix)\n--\n\n"
     "Trace Python calls on the calling thread (recorded while the Python channel is on).\n"
     "Returns False, installing nothing, when another profile hook (e.g. cProfile) is set."},
    {"python_tracer_uninstall", as_cfunction(python_tracer_uninstall), METH_FASTCALL,
     "python_tracer_uninstall()\n--\n\nRemove perfprof's hook from the calling thread."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool add_python_tracer(PyObject* module) { return PyModule_AddFunctions(module, tracer_methods) == 0; }

}  // namespace perfprof::bindings
