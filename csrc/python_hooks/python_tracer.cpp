#include "python_hooks/python_tracer.h"

#include <frameobject.h>

#include <cstddef>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "python_hooks/c_function.h"
#include "python_hooks/python_call_names.h"
#include "record/recorder.h"

namespace perfprof::python_hooks {
namespace {

// torch.profiler records at most this many of the frames running when it starts, the innermost.
constexpr size_t kMaxRunningFrames = 128;


// A call the thread is in.
struct OpenCall {
  uint64_t range_id = 0;         // 0: not recorded
  PyCodeObject* code = nullptr;  // a Python frame's code (its frame keeps it alive); null: a built-in
  bool own = false;              // a perfprof frame: nothing inside it is recorded
};

// The calls the thread is in, innermost last: the frames that were running when tracing began on
// the thread, then every call the callbacks saw begin and not end yet. Returns pop them in order.
struct ThreadCalls {
  std::vector<OpenCall> open;
  int own_depth = 0;  // perfprof frames among them
};

ThreadCalls& thread_calls() {
  thread_local ThreadCalls calls;
  return calls;
}

// A call of Module.__call__ is a module call; any other a Python function call.
RangeKind kind_of_call(PyCodeObject* code) { return is_module_call(code) ? RangeKind::Module : RangeKind::PythonFunction; }

void begin_call(StringId name, PyCodeObject* code) {
  ThreadCalls& calls = thread_calls();
  const bool own = name == kOwnCode;
  calls.open.push_back({0, code, own});
  if (own) {
    ++calls.own_depth;
    return;
  }
  Recorder& recorder = Recorder::instance();
  if (name == kUnnamed || calls.own_depth > 0 || !recorder.enabled(kChannelPython)) return;
  const uint64_t id = Recorder::next_range_id();
  recorder.begin_range(id, name, kind_of_call(code), kNoArgs);
  calls.open.back().range_id = id;
}

void end_call() {
  ThreadCalls& calls = thread_calls();
  if (calls.open.empty()) return;  // not expected: the frames running at install are noted
  const OpenCall call = calls.open.back();
  calls.open.pop_back();
  calls.own_depth -= call.own;
  Recorder::instance().end_recorded_range(call.range_id);
}

// Names are looked up only where they are recorded: inside perfprof's own calls nothing is, and a
// built-in's name (torch's: its first call's) must not come from a call perfprof made.
bool inside_own_call() { return thread_calls().own_depth > 0; }

// A started call's name; a Module.__call__ frame (`frame_of()`) is named by its module.
template <typename FrameOf>
StringId with_module(StringId name, FrameOf&& frame_of) {
  if (name != kModuleCall) return name;
  return inside_own_call() ? kUnnamed : module_frame_name(frame_of());
}

StringId named_builtin(const PyMethodDef* method, PyObject* self) {
  return inside_own_call() ? kUnnamed : builtin_name(method, self);
}

template <typename Record>
void guarded(Record&& record) {
  try {
    record();
  } catch (...) {
    // Out of memory: the call is not recorded; the program goes on.
  }
}

// -- frames already running -----------------------------------------------------------------------

PyCodeObject* code_of(PyFrameObject* frame) {
  PyCodeObject* code = PyFrame_GetCode(frame);
  Py_DECREF(code);  // the frame keeps it alive
  return code;
}

// The calling thread's Python frames, innermost first.
class RunningFrames {
 public:
  RunningFrames() {
    PyFrameObject* frame = PyEval_GetFrame();  // borrowed
    Py_XINCREF(frame);
    while (frame != nullptr) {
      frames_.push_back(frame);
      frame = PyFrame_GetBack(frame);  // a new reference
    }
  }
  ~RunningFrames() {
    for (PyFrameObject* frame : frames_) Py_DECREF(frame);
  }
  RunningFrames(const RunningFrames&) = delete;
  RunningFrames& operator=(const RunningFrames&) = delete;

  const std::vector<PyFrameObject*>& innermost_first() const { return frames_; }

 private:
  std::vector<PyFrameObject*> frames_;
};

// Tracing begins on this thread: the frames running now become its open calls, outermost first,
// so that their returns close them; none is recorded yet.
void note_running_frames() {
  ThreadCalls& calls = thread_calls();
  calls.open.clear();
  calls.own_depth = 0;
  const RunningFrames frames;
  const auto& innermost_first = frames.innermost_first();
  for (auto it = innermost_first.rbegin(); it != innermost_first.rend(); ++it) {
    PyCodeObject* code = code_of(*it);
    const bool own = started_code_name(code) == kOwnCode;
    calls.open.push_back({0, code, own});
    calls.own_depth += own;
  }
}

// Records the Python frames running now as calls beginning now, as torch.profiler records the
// frames on the stack when it starts: named at the line each frame is at, the innermost
// kMaxRunningFrames, outside perfprof's own calls. Built-ins running now are not recorded (torch
// records none). Ranges begun before now lose their begin (the window starts now): not ended.
void record_running_frames() {
  ThreadCalls& calls = thread_calls();
  for (OpenCall& call : calls.open) call.range_id = 0;
  if (!Recorder::instance().enabled(kChannelPython)) return;
  const RunningFrames frames;
  const auto& innermost_first = frames.innermost_first();
  // The open Python calls, innermost first, each with its frame (innermost_first[k] for the k-th).
  std::vector<OpenCall*> python_calls;
  for (auto it = calls.open.rbegin(); it != calls.open.rend(); ++it) {
    if (it->code == nullptr) continue;
    const size_t k = python_calls.size();
    if (k == innermost_first.size() || code_of(innermost_first[k]) != it->code) break;  // not expected
    python_calls.push_back(&*it);
  }
  for (size_t k = python_calls.size(); k-- > 0;) {
    OpenCall& call = *python_calls[k];
    if (call.own) break;  // what is inside perfprof's own call is not recorded
    if (k >= kMaxRunningFrames) continue;
    PyFrameObject* frame = innermost_first[k];
    StringId name = code_name_at_line(call.code, PyFrame_GetLineNumber(frame));
    if (name == kModuleCall) name = module_frame_name(frame);
    if (name == kUnnamed) continue;
    call.range_id = Recorder::next_range_id();
    Recorder::instance().begin_range(call.range_id, name, kind_of_call(call.code), kNoArgs);
  }
}

#if PY_VERSION_HEX >= 0x030C0000
// Python 3.12+: sys.monitoring callbacks (C functions, so CPython calls them without creating a
// frame object). Events are process-wide; each callback first checks that its thread traces.
// The events and their pairing are those CPython's own setprofile emulation (what torch.profiler
// uses) makes of them, built-ins included.

thread_local bool tls_tracing = false;
int g_tool_id = -1;
int g_tracing_threads = 0;     // under the GIL
PyObject* g_missing = nullptr;  // sys.monitoring.MISSING: no first argument

PyCodeObject* as_code(PyObject* object) {
  return PyCode_Check(object) ? reinterpret_cast<PyCodeObject*>(object) : nullptr;
}

// PY_START (code, offset)
PyObject* on_python_start(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (tls_tracing && nargs >= 1) {
    guarded([&] {
      PyCodeObject* code = as_code(args[0]);
      begin_call(code ? with_module(started_code_name(code), [] { return PyEval_GetFrame(); }) : kUnnamed, code);
    });
  }
  Py_RETURN_NONE;
}

// PY_RESUME (code, offset), PY_THROW (code, offset, exception): a generator or coroutine goes on
// at `offset`.
PyObject* on_python_resume(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (tls_tracing && nargs >= 2) {
    guarded([&] {
      PyCodeObject* code = as_code(args[0]);
      const int offset = static_cast<int>(PyLong_AsLong(args[1]));
      if (offset == -1 && PyErr_Occurred()) PyErr_Clear();
      begin_call(code ? resumed_code_name(code, offset, [&] { return PyCode_Addr2Line(code, offset); }) : kUnnamed,
                 code);
    });
  }
  Py_RETURN_NONE;
}

// PY_RETURN, PY_YIELD, PY_UNWIND (code, offset, value)
PyObject* on_python_end(PyObject*, PyObject* const*, Py_ssize_t) {
  if (tls_tracing) end_call();
  Py_RETURN_NONE;
}

// The built-in a CALL, C_RETURN or C_RAISE event is about, as the setprofile emulation sees it: a
// built-in function or method, or a method descriptor called with its object (bound to it).
struct Builtin {
  const PyMethodDef* method = nullptr;
  PyObject* self = nullptr;
};

bool builtin_called(PyObject* callable, PyObject* arg0, Builtin& builtin) {
  if (PyCFunction_Check(callable)) {
    auto* function = reinterpret_cast<PyCFunctionObject*>(callable);
    builtin = {function->m_ml, function->m_self};
    return true;
  }
  if (Py_IS_TYPE(callable, &PyMethodDescr_Type) && arg0 != g_missing) {
    builtin = {reinterpret_cast<PyMethodDescrObject*>(callable)->d_method, arg0};
    return true;
  }
  return false;
}

// CALL (code, offset, callable, arg0)
PyObject* on_call(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  Builtin builtin;
  if (tls_tracing && nargs >= 4 && builtin_called(args[2], args[3], builtin)) {
    guarded([&] { begin_call(named_builtin(builtin.method, builtin.self), nullptr); });
  }
  Py_RETURN_NONE;
}

// C_RETURN, C_RAISE (code, offset, callable, arg0)
PyObject* on_builtin_end(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  Builtin builtin;
  if (tls_tracing && nargs >= 4 && builtin_called(args[2], args[3], builtin)) end_call();
  Py_RETURN_NONE;
}

PyMethodDef monitoring_callbacks[] = {
    {"on_python_start", as_cfunction(on_python_start), METH_FASTCALL, nullptr},
    {"on_python_resume", as_cfunction(on_python_resume), METH_FASTCALL, nullptr},
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
    {"PY_START", &monitoring_callbacks[0]},  {"PY_RESUME", &monitoring_callbacks[1]},
    {"PY_THROW", &monitoring_callbacks[1]},  {"PY_RETURN", &monitoring_callbacks[2]},
    {"PY_YIELD", &monitoring_callbacks[2]},  {"PY_UNWIND", &monitoring_callbacks[2]},
    {"CALL", &monitoring_callbacks[3]},      {"C_RETURN", &monitoring_callbacks[4]},
    {"C_RAISE", &monitoring_callbacks[4]},
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

bool read_missing() {
  if (g_missing) return true;
  PyObject* monitoring = PySys_GetObject("monitoring");  // borrowed
  g_missing = monitoring ? PyObject_GetAttrString(monitoring, "MISSING") : nullptr;  // kept
  return g_missing != nullptr;
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
  if (!read_missing()) return false;
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

bool tracing_here() { return tls_tracing; }

PyObject* install() {
  if (tls_tracing) Py_RETURN_TRUE;
  if (!acquire_tool()) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_FALSE;  // every tool id is in use
  }
  note_running_frames();
  if (g_tracing_threads == 0 && !set_events(true)) return nullptr;
  ++g_tracing_threads;
  tls_tracing = true;
  guarded(record_running_frames);
  Py_RETURN_TRUE;
}

PyObject* uninstall() {
  if (!tls_tracing) Py_RETURN_NONE;
  tls_tracing = false;
  thread_calls() = ThreadCalls();
  if (--g_tracing_threads == 0 && !(set_events(false) && release_tool())) return nullptr;
  Py_RETURN_NONE;
}

#else
// Python 3.10 and 3.11: a profile hook per thread (PyEval_SetProfile), as torch.profiler's.

// Where a resumed generator or coroutine goes on, in bytes.
int resume_offset(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030B0000
  return PyFrame_GetLasti(frame);
#else
  return frame->f_lasti * static_cast<int>(sizeof(_Py_CODEUNIT));
#endif
}

void begin_python_call(PyFrameObject* frame) {
  PyCodeObject* code = code_of(frame);
  const bool resumable = code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR);
  begin_call(resumable ? resumed_code_name(code, resume_offset(frame), [frame] { return PyFrame_GetLineNumber(frame); })
                       : with_module(started_code_name(code), [frame] { return frame; }),
             code);
}

// A C_CALL's callable: CPython binds a method descriptor to its object before reporting it.
StringId builtin_call_name(PyObject* callable) {
  if (!PyCFunction_Check(callable)) return kUnnamed;
  auto* function = reinterpret_cast<PyCFunctionObject*>(callable);
  return named_builtin(function->m_ml, function->m_self);
}

int profile_hook(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  guarded([&] {
    switch (what) {
      case PyTrace_CALL: begin_python_call(frame); break;
      case PyTrace_C_CALL: begin_call(builtin_call_name(arg), nullptr); break;
      case PyTrace_RETURN:
      case PyTrace_C_RETURN:
      case PyTrace_C_EXCEPTION: end_call(); break;
      default: break;
    }
  });
  return 0;
}

bool tracing_here() { return PyThreadState_Get()->c_profilefunc == profile_hook; }

PyObject* install() {
  PyThreadState* thread = PyThreadState_Get();
  if (thread->c_profilefunc != nullptr && !tracing_here()) Py_RETURN_FALSE;  // cProfile & co
  if (!tracing_here()) {
    note_running_frames();
    PyEval_SetProfile(profile_hook, nullptr);
    guarded(record_running_frames);
  }
  Py_RETURN_TRUE;
}

PyObject* uninstall() {
  if (tracing_here()) {
    PyEval_SetProfile(nullptr, nullptr);
    thread_calls() = ThreadCalls();
  }
  Py_RETURN_NONE;
}
#endif

// The naming rules from install's arguments; false with an exception set when they are not
// (str, list of str, code object or None).
bool read_naming_rules(PyObject* const* args, Py_ssize_t nargs, NamingRules& rules) {
  if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyList_Check(args[1]) ||
      !(args[2] == Py_None || PyCode_Check(args[2]))) {
    PyErr_SetString(PyExc_TypeError,
                    "python_tracer_install(own_prefix: str, path_prefixes: list[str], module_call_code: code | None)");
    return false;
  }
  const char* own = PyUnicode_AsUTF8(args[0]);
  if (!own) return false;
  rules.own_prefix = own;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args[1]); ++i) {
    PyObject* item = PyList_GET_ITEM(args[1], i);
    const char* prefix = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : nullptr;
    if (!prefix) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "python_tracer_install: path prefixes must be str");
      return false;
    }
    rules.path_prefixes.emplace_back(prefix);
  }
  rules.module_call_code = args[2] == Py_None ? nullptr : args[2];
  return true;
}

PyObject* python_tracer_install(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  NamingRules rules;
  if (!read_naming_rules(args, nargs, rules)) return nullptr;
  try {
    set_naming_rules(std::move(rules));
    return install();
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
}

PyObject* python_tracer_window_begin(PyObject*, PyObject* const*, Py_ssize_t) {
  new_naming_session();
  if (tracing_here()) guarded(record_running_frames);
  Py_RETURN_NONE;
}

PyObject* python_tracer_uninstall(PyObject*, PyObject* const*, Py_ssize_t) { return uninstall(); }

PyMethodDef tracer_methods[] = {
    {"python_tracer_install", as_cfunction(python_tracer_install), METH_FASTCALL,
     "python_tracer_install(own_prefix, path_prefixes, module_call_code, /)\n--\n\n"
     "Trace Python calls on the calling thread (recorded while the Python channel is on), the\n"
     "frames running now included. Functions in files under own_prefix, and what they call, are\n"
     "not traced; path_prefixes (longest first) are removed from file names; frames of\n"
     "module_call_code (torch.nn.Module.__call__'s, or None) are named by their module.\n"
     "Returns False, installing nothing, when another profile hook (e.g. cProfile) is set\n"
     "(Python < 3.12), or when every sys.monitoring tool id is taken (3.12+)."},
    {"python_tracer_window_begin", as_cfunction(python_tracer_window_begin), METH_FASTCALL,
     "python_tracer_window_begin()\n--\n\n"
     "The kept window begins (after discard()): the frames running on the calling thread begin\n"
     "now, and built-ins are named afresh, as torch.profiler names them per session."},
    {"python_tracer_uninstall", as_cfunction(python_tracer_uninstall), METH_FASTCALL,
     "python_tracer_uninstall()\n--\n\nRemove perfprof's hook from the calling thread."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool add_python_tracer(PyObject* module) { return PyModule_AddFunctions(module, tracer_methods) == 0; }

}  // namespace perfprof::python_hooks
