#include "bindings/fast_calls.h"

#include <structmember.h>

#include <cstdint>
#include <string>

#include "python_hooks/c_function.h"
#include "cupti/activity_collector.h"
#include "mstx/mstx.h"
#include "record/recorder.h"

namespace perfprof::bindings {

using python_hooks::as_cfunction;
namespace {

// ---------------------------------------------------------------------------------------------
// Caches, valid while the GIL is held.

// Python str -> interned id. The dict keeps each str alive, so lookups hash once (str caches
// its hash) and the C++ string table is touched only the first time a name is seen.
PyObject* g_string_ids = nullptr;
// Python str -> MstxDomain* (as an int).
PyObject* g_domains = nullptr;
PyObject* g_default_domain_name = nullptr;
MstxDomain* g_default_domain = nullptr;


bool intern(PyObject* text, StringId* id) {
  if (PyObject* cached = PyDict_GetItemWithError(g_string_ids, text)) {
    *id = static_cast<StringId>(PyLong_AsUnsignedLong(cached));
    return true;
  }
  if (PyErr_Occurred()) return false;
  // surrogatepass: a str with lone surrogates still records (the exporter shows U+FFFD).
  PyObject* utf8 = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
  if (!utf8) return false;
  try {
    *id = global_strings().intern(
        {PyBytes_AS_STRING(utf8), static_cast<size_t>(PyBytes_GET_SIZE(utf8))});
  } catch (const std::exception& error) {
    Py_DECREF(utf8);
    PyErr_SetString(PyExc_MemoryError, error.what());
    return false;
  }
  Py_DECREF(utf8);
  PyObject* value = PyLong_FromUnsignedLong(*id);
  if (!value) return false;
  const int failed = PyDict_SetItem(g_string_ids, text, value);
  Py_DECREF(value);
  return failed == 0;
}

MstxDomain* lookup_domain(PyObject* name) {
  if (name == nullptr || name == g_default_domain_name) return g_default_domain;
  if (PyObject* cached = PyDict_GetItemWithError(g_domains, name)) {
    return static_cast<MstxDomain*>(PyLong_AsVoidPtr(cached));
  }
  if (PyErr_Occurred()) return nullptr;
  const char* utf8 = PyUnicode_AsUTF8(name);
  if (!utf8) return nullptr;
  MstxDomain* domain = nullptr;
  try {
    domain = &Mstx::instance().domain(utf8);
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_MemoryError, error.what());
    return nullptr;
  }
  PyObject* value = PyLong_FromVoidPtr(domain);
  if (!value) return nullptr;
  const int failed = PyDict_SetItem(g_domains, name, value);
  Py_DECREF(value);
  return failed == 0 ? domain : nullptr;
}

// Names a thread after Python's name for it, the first time it records.
thread_local bool tls_thread_named __attribute__((tls_model("initial-exec"))) = false;

void name_thread_from_python() {
  tls_thread_named = true;
  PyObject* exc_type = nullptr;
  PyObject* exc_value = nullptr;
  PyObject* exc_tb = nullptr;
  PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
  PyObject* threading = PyImport_ImportModule("threading");
  PyObject* thread = threading ? PyObject_CallMethod(threading, "current_thread", nullptr) : nullptr;
  PyObject* name = thread ? PyObject_GetAttrString(thread, "name") : nullptr;
  const char* utf8 = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  if (utf8) Recorder::instance().name_current_thread(utf8);
  Py_XDECREF(name);
  Py_XDECREF(thread);
  Py_XDECREF(threading);
  PyErr_Clear();  // naming is best effort; it must never fail the user's call
  PyErr_Restore(exc_type, exc_value, exc_tb);
}

inline void ensure_thread_named() {
  if (!tls_thread_named) name_thread_from_python();
}

// ---------------------------------------------------------------------------------------------
// Argument parsing for METH_FASTCALL | METH_KEYWORDS functions.

// Fills values[0..count) from positional arguments, then keywords. Unset values stay nullptr.
bool parse_arguments(const char* function, const char* const* names, Py_ssize_t count,
                     Py_ssize_t required, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames, PyObject** values) {
  if (nargs > count) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %zd arguments (%zd given)", function, count,
                 nargs);
    return false;
  }
  for (Py_ssize_t i = 0; i < count; ++i) values[i] = i < nargs ? args[i] : nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t i = 0;
    while (i < count && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) ++i;
    if (i == count) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", function, key);
      return false;
    }
    if (values[i]) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", function,
                   names[i]);
      return false;
    }
    values[i] = args[nargs + k];
  }
  for (Py_ssize_t i = 0; i < required; ++i) {
    if (!values[i]) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", function, names[i]);
      return false;
    }
  }
  return true;
}

bool require_str(const char* function, const char* field, PyObject* value) {
  if (PyUnicode_Check(value)) return true;
  PyErr_Format(PyExc_TypeError, "%s(): '%s' must be str, got %s", function, field,
               Py_TYPE(value)->tp_name);
  return false;
}

bool require_optional_str(const char* function, const char* field, PyObject* value) {
  return value == nullptr || value == Py_None || require_str(function, field, value);
}

bool read_range_id(const char* function, PyObject* value, uint64_t* id) {
  if (!PyLong_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s(): 'range_id' must be int, got %s", function,
                 Py_TYPE(value)->tp_name);
    return false;
  }
  *id = PyLong_AsUnsignedLongLong(value);
  if (*id == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
    PyErr_Format(PyExc_ValueError, "%s(): 'range_id' must be an id returned by range_start",
                 function);
    return false;
  }
  return true;
}

// A stream given to an mstx call: None, an int handle, or an object with an int `cuda_stream`
// attribute (torch.cuda.Stream). Returns false with a TypeError for anything else, a ValueError for an
// int outside 0..2**63 - 1.
bool read_stream(const char* function, PyObject* value, bool* given, uint64_t* handle) {
  *given = value != nullptr && value != Py_None;
  if (!*given) return true;
  PyObject* number = nullptr;
  if (PyLong_Check(value)) {
    number = Py_NewRef(value);
  } else {
    number = PyObject_GetAttrString(value, "cuda_stream");
    if (!number) PyErr_Clear();
  }
  if (!number || !PyLong_Check(number)) {
    Py_XDECREF(number);
    PyErr_Format(PyExc_TypeError,
                 "%s(): 'stream' must be None, an int stream handle or a torch.cuda.Stream, got %s",
                 function, Py_TYPE(value)->tp_name);
    return false;
  }
  // A handle is a pointer's bits, recorded as a signed 64-bit argument: one outside 0..2**63 - 1
  // is refused, not wrapped into another stream.
  const long long signed_handle = PyLong_AsLongLong(number);
  Py_DECREF(number);
  if (signed_handle < 0) {
    PyErr_Clear();  // the OverflowError of an int beyond 64 bits, if that was it
    PyErr_Format(PyExc_ValueError, "%s(): 'stream' must be a stream handle from 0 to 2**63 - 1, got %R", function,
                 value);
    return false;
  }
  *handle = static_cast<uint64_t>(signed_handle);
  return true;
}

// Shared argument handling of mstx.mark and mstx.range_start.
struct MarkerCall {
  MstxDomain* domain = nullptr;
  StringId message_id = 0;
  const char* message = nullptr;
  ArgSetId args = kNoArgs;
  bool stream_given = false;
  uint64_t stream = 0;
};

bool parse_marker_call(const char* function, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames, MarkerCall* call) {
  static const char* const names[] = {"message", "stream", "domain"};
  PyObject* values[3];
  if (!parse_arguments(function, names, 3, 1, args, nargs, kwnames, values)) return false;
  PyObject* message = values[0];
  PyObject* domain_name = values[2];
  if (!require_str(function, "message", message)) return false;
  if (domain_name && !require_str(function, "domain", domain_name)) return false;
  bool& stream_given = call->stream_given;
  uint64_t& stream = call->stream;
  if (!read_stream(function, values[1], &stream_given, &stream)) return false;

  call->domain = lookup_domain(domain_name);
  if (!call->domain || !intern(message, &call->message_id)) return false;
  call->message = PyUnicode_AsUTF8(message);
  if (!call->message) {  // lone surrogates: NVTX gets a stand-in, the trace the real text
    PyErr_Clear();
    call->message = "<message not encodable as UTF-8>";
  }
  call->args = call->domain->args;
  if (stream_given) {
    try {
      call->args = Mstx::instance().args_with_stream(*call->domain, stream);
    } catch (const std::exception& error) {
      PyErr_SetString(PyExc_MemoryError, error.what());
      return false;
    }
  }
  if (Recorder::instance().enabled(kChannelMstx)) ensure_thread_named();
  return true;
}

// ---------------------------------------------------------------------------------------------
// mstx

PyObject* mstx_mark(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  MarkerCall call;
  if (!parse_marker_call("mark", args, nargs, kwnames, &call)) return nullptr;
  Mstx::instance().mark(*call.domain, call.message_id, call.message, call.args);
  Py_RETURN_NONE;
}

PyObject* mstx_range_start(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  MarkerCall call;
  if (!parse_marker_call("range_start", args, nargs, kwnames, &call)) return nullptr;
  const uint64_t id = Mstx::instance().range_start(*call.domain, call.message_id, call.message, call.args);
  if (call.stream_given) ActivityCollector::instance().annotate_stream_range(id, call.stream);
  return PyLong_FromUnsignedLongLong(id);
}

PyObject* mstx_range_end(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const char* const names[] = {"range_id", "domain"};
  PyObject* values[2];
  if (!parse_arguments("range_end", names, 2, 1, args, nargs, kwnames, values)) return nullptr;
  uint64_t id = 0;
  if (!read_range_id("range_end", values[0], &id)) return nullptr;
  if (values[1] && !require_str("range_end", "domain", values[1])) return nullptr;
  Mstx::instance().range_end(id);
  Py_RETURN_NONE;
}

// ---------------------------------------------------------------------------------------------
// User annotations (record_function)

// {args: text} for a record_function given args text.
bool intern_annotation_args(PyObject* utf8, ArgSetId* id) {
  try {
    const std::string_view text(PyBytes_AS_STRING(utf8), static_cast<size_t>(PyBytes_GET_SIZE(utf8)));
    *id = global_arg_sets().intern({{{ArgKey::Annotation, global_strings().intern(text)}}});
    return true;
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_MemoryError, error.what());
    return false;
  }
}

// Returns the id of the recorded range, or 0 when user annotations are not being recorded.
bool begin_user_annotation(PyObject* name, PyObject* args, uint64_t* id) {
  *id = 0;
  Recorder& recorder = Recorder::instance();
  if (!recorder.enabled(kChannelUserAnnotations)) return true;
  StringId name_id = 0;
  if (!intern(name, &name_id)) return false;
  ArgSetId args_id = kNoArgs;
  if (args && args != Py_None) {
    PyObject* utf8 = PyUnicode_AsEncodedString(args, "utf-8", "surrogatepass");
    if (!utf8) return false;
    const bool interned = intern_annotation_args(utf8, &args_id);
    Py_DECREF(utf8);
    if (!interned) return false;
  }
  ensure_thread_named();
  *id = Recorder::next_range_id();
  recorder.begin_range(*id, name_id, RangeKind::UserAnnotation, args_id);
  ActivityCollector::push_host_range(*id);
  return true;
}

inline void end_user_annotation(uint64_t id) {
  if (id == 0) return;
  ActivityCollector::pop_host_range(id);
  Recorder::instance().end_recorded_range(id);
}

// The one argument of the *_end(range_id) functions.
bool read_single_range_id(const char* function, PyObject* const* args, Py_ssize_t nargs, uint64_t* id) {
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "%s() takes exactly one argument (range_id)", function);
    return false;
  }
  return read_range_id(function, args[0], id);
}

PyObject* annotation_begin(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const char* const names[] = {"name", "args"};
  PyObject* values[2];
  if (!parse_arguments("annotation_begin", names, 2, 1, args, nargs, kwnames, values)) return nullptr;
  if (!require_str("annotation_begin", "name", values[0]) ||
      !require_optional_str("annotation_begin", "args", values[1])) {
    return nullptr;
  }
  uint64_t id = 0;
  if (!begin_user_annotation(values[0], values[1], &id)) return nullptr;
  return PyLong_FromUnsignedLongLong(id);
}

PyObject* annotation_end(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  uint64_t id = 0;
  if (!read_single_range_id("annotation_end", args, nargs, &id)) return nullptr;
  end_user_annotation(id);
  Py_RETURN_NONE;
}

PyObject* record_counter(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "record_counter(name: str, value: float)");
    return nullptr;
  }
  const double value = PyFloat_AsDouble(args[1]);
  if (value == -1.0 && PyErr_Occurred()) return nullptr;
  if (Recorder::instance().enabled(kChannelCounters)) {
    StringId name_id = 0;
    if (!intern(args[0], &name_id)) return nullptr;
    ensure_thread_named();
    Recorder::instance().counter(name_id, value);
  }
  Py_RETURN_NONE;
}

// ---------------------------------------------------------------------------------------------
// RecordFunction: the context-manager half of perfprof.record_function (the Python subclass adds
// the decorator). One instance is one range; entering it again before exiting is an error.

struct RecordFunctionObject {
  PyObject_HEAD
  PyObject* name;
  PyObject* args;
  uint64_t range_id;
  bool entered;
};

PyObject* record_function_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"name", "args", nullptr};
  PyObject* name = nullptr;
  PyObject* annotation_args = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:record_function",
                                   const_cast<char**>(keywords), &name, &annotation_args)) {
    return nullptr;
  }
  if (!require_str("record_function", "name", name) ||
      !require_optional_str("record_function", "args", annotation_args)) {
    return nullptr;
  }
  auto* self = reinterpret_cast<RecordFunctionObject*>(type->tp_alloc(type, 0));
  if (!self) return nullptr;
  self->name = Py_NewRef(name);
  self->args = Py_NewRef(annotation_args);
  self->range_id = 0;
  self->entered = false;
  return reinterpret_cast<PyObject*>(self);
}

void record_function_dealloc(PyObject* object) {
  auto* self = reinterpret_cast<RecordFunctionObject*>(object);
  Py_XDECREF(self->name);
  Py_XDECREF(self->args);
  Py_TYPE(object)->tp_free(object);
}

PyObject* record_function_enter(PyObject* object, PyObject*) {
  auto* self = reinterpret_cast<RecordFunctionObject*>(object);
  if (self->entered) {
    PyErr_SetString(PyExc_RuntimeError,
                    "record_function: this instance is already entered; create one per range");
    return nullptr;
  }
  if (!begin_user_annotation(self->name, self->args, &self->range_id)) return nullptr;
  self->entered = true;
  return Py_NewRef(object);
}

PyObject* record_function_exit(PyObject* object, PyObject* const*, Py_ssize_t) {
  auto* self = reinterpret_cast<RecordFunctionObject*>(object);
  end_user_annotation(self->range_id);
  self->range_id = 0;
  self->entered = false;
  Py_RETURN_FALSE;  // exceptions propagate
}

PyMethodDef record_function_methods[] = {
    {"__enter__", record_function_enter, METH_NOARGS, "Begin the range."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(record_function_exit)),
     METH_FASTCALL, "End the range."},
    {nullptr, nullptr, 0, nullptr},
};

PyMemberDef record_function_members[] = {
    {"name", T_OBJECT, offsetof(RecordFunctionObject, name), READONLY, "Range name."},
    {"args", T_OBJECT, offsetof(RecordFunctionObject, args), READONLY, "Optional annotation text."},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot record_function_slots[] = {
    {Py_tp_doc, const_cast<char*>(
        "RecordFunction(name, args=None)\n--\n\nA user annotation range (context manager).")},
    {Py_tp_new, reinterpret_cast<void*>(record_function_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(record_function_dealloc)},
    {Py_tp_methods, record_function_methods},
    {Py_tp_members, record_function_members},
    {0, nullptr},
};

PyType_Spec record_function_spec = {
    "perfprof._core.RecordFunction", sizeof(RecordFunctionObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, record_function_slots,
};

// ---------------------------------------------------------------------------------------------

PyMethodDef mstx_methods[] = {
    {"mark", as_cfunction(mstx_mark), METH_FASTCALL | METH_KEYWORDS,
     "mark(message, stream=None, domain='default')\n--\n\n"
     "Record an instantaneous marker, and emit it as an NVTX mark in the NVTX domain `domain`.\n"
     "perfprof records it only under ExperimentalConfig(mstx=True) when the domain passes\n"
     "mstx_domain_include / mstx_domain_exclude."},
    {"range_start", as_cfunction(mstx_range_start), METH_FASTCALL | METH_KEYWORDS,
     "range_start(message, stream=None, domain='default')\n--\n\n"
     "Start a range and return its id for range_end; the range may end on another thread.\n"
     "It is also emitted as an NVTX range in the NVTX domain `domain`. `stream` (a\n"
     "torch.cuda.Stream or a raw stream handle) is recorded with the range."},
    {"range_end", as_cfunction(mstx_range_end), METH_FASTCALL | METH_KEYWORDS,
     "range_end(range_id, domain='default')\n--\n\nEnd the range started with range_start."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef annotation_methods[] = {
    {"annotation_begin", as_cfunction(annotation_begin), METH_FASTCALL | METH_KEYWORDS,
     "annotation_begin(name, args=None)\n--\n\n"
     "Begin a user-annotation range; returns its id (0 when not recording)."},
    {"annotation_end", as_cfunction(annotation_end), METH_FASTCALL,
     "annotation_end(range_id, /)\n--\n\nEnd a range returned by annotation_begin."},
    {"record_counter", as_cfunction(record_counter), METH_FASTCALL,
     "record_counter(name, value, /)\n--\n\nRecord a counter sample (when counters are recorded)."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool add_fast_calls(PyObject* module) {
  g_string_ids = PyDict_New();
  g_domains = PyDict_New();
  g_default_domain_name = PyUnicode_InternFromString("default");
  if (!g_string_ids || !g_domains || !g_default_domain_name) return false;
  try {
    g_default_domain = &Mstx::instance().domain("default");
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_MemoryError, error.what());
    return false;
  }
  if (PyModule_AddFunctions(module, annotation_methods) != 0) return false;
  PyObject* mstx = PyModule_New("perfprof._core.mstx");
  if (!mstx) return false;
  if (PyModule_AddFunctions(mstx, mstx_methods) != 0 || PyModule_AddObject(module, "mstx", mstx) != 0) {
    Py_DECREF(mstx);
    return false;
  }
  PyObject* record_function_type = PyType_FromSpec(&record_function_spec);
  if (!record_function_type) return false;
  if (PyModule_AddObject(module, "RecordFunction", record_function_type) != 0) {
    Py_DECREF(record_function_type);
    return false;
  }
  return true;
}

}  // namespace perfprof::bindings
