#include "bindings/user_scope_enter.h"

#include <structmember.h>

#include <cstddef>

#include "torch_hooks/operator_ranges.h"

namespace perfprof::bindings {
namespace {

struct UserScopeEnterObject {
  PyObject_HEAD
  PyObject* replaced;  // the __enter__ this one stands in for
  vectorcallfunc vectorcall;
};

PyObject* enter_vectorcall(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  PyObject* replaced = reinterpret_cast<UserScopeEnterObject*>(callable)->replaced;
  user_scope_begins(true);
  PyObject* result = PyObject_Vectorcall(replaced, args, nargsf, kwnames);
  user_scope_begins(false);
  return result;
}

PyObject* enter_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* replaced = nullptr;
  static const char* keywords[] = {"replaced", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:UserScopeEnter", const_cast<char**>(keywords), &replaced)) {
    return nullptr;
  }
  if (!PyCallable_Check(replaced)) {
    PyErr_SetString(PyExc_TypeError, "UserScopeEnter: 'replaced' must be callable");
    return nullptr;
  }
  auto* self = reinterpret_cast<UserScopeEnterObject*>(type->tp_alloc(type, 0));
  if (!self) return nullptr;
  self->replaced = Py_NewRef(replaced);
  self->vectorcall = enter_vectorcall;
  return reinterpret_cast<PyObject*>(self);
}

void enter_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(reinterpret_cast<UserScopeEnterObject*>(self)->replaced);
  type->tp_free(self);
  Py_DECREF(type);
}

// `instance.__enter__` (what a `with` statement calls): a method bound to this object, as for a
// function. Read on the class, it gives what the replaced __enter__ gives there (the function):
// TorchScript and torch.compile, which read it there, see torch's own.
PyObject* enter_get(PyObject* self, PyObject* instance, PyObject* owner) {
  if (instance != nullptr && instance != Py_None) return PyMethod_New(self, instance);
  PyObject* replaced = reinterpret_cast<UserScopeEnterObject*>(self)->replaced;
  descrgetfunc get = Py_TYPE(replaced)->tp_descr_get;
  return get == nullptr ? Py_NewRef(replaced) : get(replaced, nullptr, owner);
}

PyMemberDef enter_members[] = {
    {"replaced", T_OBJECT, offsetof(UserScopeEnterObject, replaced), READONLY, "The __enter__ this one calls."},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(UserScopeEnterObject, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot enter_slots[] = {
    {Py_tp_doc, const_cast<char*>("UserScopeEnter(replaced)\n--\n\n"
                                  "Stands in for torch.profiler.record_function.__enter__: calls `replaced`, "
                                  "the range it begins filed as a user annotation.")},
    {Py_tp_new, reinterpret_cast<void*>(enter_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(enter_dealloc)},
    {Py_tp_descr_get, reinterpret_cast<void*>(enter_get)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, enter_members},
    {0, nullptr},
};

PyType_Spec enter_spec = {
    "perfprof._core.UserScopeEnter", sizeof(UserScopeEnterObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR, enter_slots,
};

}  // namespace

bool add_user_scope_enter(PyObject* module) {
  PyObject* type = PyType_FromSpec(&enter_spec);
  if (!type) return false;
  if (PyModule_AddObject(module, "UserScopeEnter", type) != 0) {
    Py_DECREF(type);
    return false;
  }
  return true;
}

}  // namespace perfprof::bindings
