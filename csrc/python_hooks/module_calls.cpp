#include "python_hooks/module_calls.h"

#include <structmember.h>

#include <cstddef>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "python_hooks/c_function.h"
#include "record/recorder.h"

namespace perfprof::python_hooks {
namespace {

// A module seen by the wrapper: the weak reference tells whether the address still holds it.
struct ModuleName {
  PyObject* weakref = nullptr;  // owned; null when the module takes no weak references
  StringId name = kEmptyString;
};

// Valid under the GIL, which every module call holds.
struct Names {
  std::unordered_map<PyObject*, ModuleName> by_module;
  std::unordered_map<std::string, int> per_class;
};

Names& names() {
  static Names& state = *new Names();  // never destroyed: module calls may run at exit
  return state;
}

thread_local bool tls_capture = false;

// Called with each module at its first call while set (memory profiling notes its parameters);
// any thread. A weak reference per module tells a reused address from the same module.
struct FirstCallObserver {
  PyObject* callback = nullptr;  // owned
  std::unordered_map<PyObject*, PyObject*> seen;  // module -> owned weak reference, or null
};

FirstCallObserver& first_call_observer() {
  static FirstCallObserver& state = *new FirstCallObserver();  // never destroyed, as names()
  return state;
}

std::string class_name(PyObject* module) {
  PyObject* name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(module)), "__name__");
  const char* text = name ? PyUnicode_AsUTF8(name) : nullptr;
  std::string result = text ? text : Py_TYPE(module)->tp_name;
  Py_XDECREF(name);
  PyErr_Clear();
  return result;
}

bool still_refers_to(PyObject* weakref, PyObject* object) {
  if (weakref == nullptr) return false;
#if PY_VERSION_HEX >= 0x030D0000
  PyObject* target = nullptr;
  if (PyWeakref_GetRef(weakref, &target) < 0) PyErr_Clear();
  Py_XDECREF(target);  // only compared, never used
  return target == object;
#else
  return PyWeakref_GetObject(weakref) == object;
#endif
}

// torch.profiler's name for a module: its class and the order in which this profiler first saw
// an instance of that class.
StringId module_name(PyObject* module) {
  Names& state = names();
  if (auto it = state.by_module.find(module); it != state.by_module.end()) {
    if (still_refers_to(it->second.weakref, module)) return it->second.name;
    Py_XDECREF(it->second.weakref);  // a new object at the address of a freed module
    state.by_module.erase(it);
  }
  const std::string kind = class_name(module);
  const StringId name = global_strings().intern(fmt::format("nn.Module: {}_{}", kind, state.per_class[kind]++));
  PyObject* weakref = PyWeakref_NewRef(module, nullptr);
  if (!weakref) PyErr_Clear();
  state.by_module.emplace(module, ModuleName{weakref, name});
  return name;
}

void forget_seen_modules(FirstCallObserver& observer) {
  for (auto& [module, weakref] : observer.seen) Py_XDECREF(weakref);
  observer.seen.clear();
}

// True the first time `module` is seen (or a new object at the address of a freed one).
bool first_call_of(FirstCallObserver& observer, PyObject* module) {
  const auto [it, added] = observer.seen.emplace(module, nullptr);
  if (!added) {
    if (it->second == nullptr || still_refers_to(it->second, module)) return false;
    Py_DECREF(it->second);
  }
  it->second = PyWeakref_NewRef(module, nullptr);
  if (!it->second) PyErr_Clear();  // no weak references: the address alone identifies it
  return true;
}

// The observer's error is printed as an unraisable exception: the module call goes on.
void observe_first_call(PyObject* module) {
  FirstCallObserver& observer = first_call_observer();
  if (observer.callback == nullptr || !first_call_of(observer, module)) return;
  PyObject* callback = Py_NewRef(observer.callback);  // the callback may replace itself
  PyObject* result = PyObject_CallOneArg(callback, module);
  if (result == nullptr) PyErr_WriteUnraisable(callback);
  Py_XDECREF(result);
  Py_DECREF(callback);
}

struct WrapperObject {
  PyObject_HEAD
  PyObject* replaced;  // the __call__ this wrapper stands in for
  vectorcallfunc vectorcall;
};

// Begins the module's range, or returns 0 when nothing is recorded.
uint64_t begin_module_range(PyObject* module) {
  Recorder& recorder = Recorder::instance();
  if (!recorder.enabled(kChannelOperators)) return 0;
  try {
    const uint64_t id = Recorder::next_range_id();
    recorder.begin_range(id, module_name(module), RangeKind::Module, kNoArgs);
    return id;
  } catch (...) {
    return 0;  // out of memory: this call is not recorded; the program goes on
  }
}

PyObject* wrapper_vectorcall(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  PyObject* replaced = reinterpret_cast<WrapperObject*>(callable)->replaced;
  if (PyVectorcall_NARGS(nargsf) < 1) return PyObject_Vectorcall(replaced, args, nargsf, kwnames);
  observe_first_call(args[0]);
  if (!tls_capture) return PyObject_Vectorcall(replaced, args, nargsf, kwnames);
  const uint64_t id = begin_module_range(args[0]);
  PyObject* result = PyObject_Vectorcall(replaced, args, nargsf, kwnames);
  Recorder::instance().end_recorded_range(id);
  return result;
}

PyObject* wrapper_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* replaced = nullptr;
  static const char* keywords[] = {"replaced", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:ModuleCallWrapper", const_cast<char**>(keywords), &replaced)) {
    return nullptr;
  }
  if (!PyCallable_Check(replaced)) {
    PyErr_SetString(PyExc_TypeError, "ModuleCallWrapper: 'replaced' must be callable");
    return nullptr;
  }
  auto* self = reinterpret_cast<WrapperObject*>(type->tp_alloc(type, 0));
  if (!self) return nullptr;
  Py_INCREF(replaced);
  self->replaced = replaced;
  self->vectorcall = wrapper_vectorcall;
  return reinterpret_cast<PyObject*>(self);
}

void wrapper_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(reinterpret_cast<WrapperObject*>(self)->replaced);
  type->tp_free(self);
  Py_DECREF(type);
}

// `module.__call__` read as an attribute (and `super().__call__`): a method bound to the wrapper,
// as for a function. `Module.__call__` read on a class gives what the replaced __call__ gives
// there (the function itself): torch.compile reads it there to trace a module call, and cannot
// trace into a C callable (it would break the graph at every module call); so it traces the
// original function, as without perfprof. Calls `module(x)` come to the wrapper in any case:
// CPython takes it from the class dictionary for them.
PyObject* wrapper_get(PyObject* self, PyObject* instance, PyObject* owner) {
  if (instance != nullptr && instance != Py_None) return PyMethod_New(self, instance);
  PyObject* replaced = reinterpret_cast<WrapperObject*>(self)->replaced;
  descrgetfunc get = Py_TYPE(replaced)->tp_descr_get;
  return get == nullptr ? Py_NewRef(replaced) : get(replaced, nullptr, owner);
}

PyObject* module_calls_capture(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || !PyBool_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "module_calls_capture(on: bool)");
    return nullptr;
  }
  tls_capture = args[0] == Py_True;
  Py_RETURN_NONE;
}

PyObject* module_calls_observe(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || (args[0] != Py_None && !PyCallable_Check(args[0]))) {
    PyErr_SetString(PyExc_TypeError, "module_calls_observe(callback: callable or None)");
    return nullptr;
  }
  FirstCallObserver& observer = first_call_observer();
  forget_seen_modules(observer);
  Py_CLEAR(observer.callback);
  if (args[0] != Py_None) observer.callback = Py_NewRef(args[0]);
  Py_RETURN_NONE;
}

PyObject* module_calls_reset_names(PyObject*, PyObject* const*, Py_ssize_t) {
  Names& state = names();
  for (auto& [module, entry] : state.by_module) Py_XDECREF(entry.weakref);
  state.by_module.clear();
  state.per_class.clear();
  Py_RETURN_NONE;
}

PyMemberDef wrapper_members[] = {
    {"replaced", T_OBJECT, offsetof(WrapperObject, replaced), READONLY, "The __call__ this wrapper calls."},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(WrapperObject, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot wrapper_slots[] = {
    {Py_tp_doc, const_cast<char*>("ModuleCallWrapper(replaced)\n--\n\n"
                                  "Stands in for torch.nn.Module.__call__: records module ranges on "
                                  "threads that capture them, then calls `replaced`.")},
    {Py_tp_new, reinterpret_cast<void*>(wrapper_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(wrapper_dealloc)},
    {Py_tp_descr_get, reinterpret_cast<void*>(wrapper_get)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, wrapper_members},
    {0, nullptr},
};

PyType_Spec wrapper_spec = {
    "perfprof._core.ModuleCallWrapper", sizeof(WrapperObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR, wrapper_slots,
};

PyMethodDef module_call_methods[] = {
    {"module_calls_capture", as_cfunction(module_calls_capture), METH_FASTCALL,
     "module_calls_capture(on, /)\n--\n\nWhether ModuleCallWrapper records module ranges on the calling thread."},
    {"module_calls_observe", as_cfunction(module_calls_observe), METH_FASTCALL,
     "module_calls_observe(callback, /)\n--\n\nCall callback(module) at the first call of each module through\n"
     "ModuleCallWrapper, on any thread, from now on (None: stop). Errors it raises are printed\n"
     "as unraisable exceptions."},
    {"module_calls_reset_names", as_cfunction(module_calls_reset_names), METH_FASTCALL,
     "module_calls_reset_names()\n--\n\nNumber module instances from 0 again (a new profiler)."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

StringId module_call_name(PyObject* module) { return module_name(module); }

bool add_module_calls(PyObject* module) {
  if (PyModule_AddFunctions(module, module_call_methods) != 0) return false;
  PyObject* type = PyType_FromSpec(&wrapper_spec);
  if (!type) return false;
  if (PyModule_AddObject(module, "ModuleCallWrapper", type) != 0) {
    Py_DECREF(type);
    return false;
  }
  return true;
}

}  // namespace perfprof::python_hooks
