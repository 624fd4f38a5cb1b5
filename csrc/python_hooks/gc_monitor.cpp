#include "python_hooks/gc_monitor.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>


#include "python_hooks/c_function.h"
#include "record/recorder.h"

namespace perfprof::python_hooks {
namespace {

std::atomic<int64_t> g_threshold_ns{0};
// Collections run under the GIL and do not nest, so one start time serves every thread.
int64_t g_start_ns = -1;

// `info["name"]` as an integer, -1 when absent.
int64_t info_int(PyObject* info, const char* name) {
  PyObject* value = PyDict_Check(info) ? PyDict_GetItemString(info, name) : nullptr;
  if (value == nullptr || !PyLong_Check(value)) return -1;
  const long long number = PyLong_AsLongLong(value);
  if (number == -1 && PyErr_Occurred()) PyErr_Clear();
  return number;
}

void record_pause(int64_t start_ns, int64_t end_ns, PyObject* info) {
  // torch.profiler's name for a collection (record_python_gc_info), so key_averages rows match.
  static const StringId name = global_strings().intern("Python GC");
  const ArgSetId args = global_arg_sets().intern({{{ArgKey::GcGeneration, info_int(info, "generation")},
                                                   {ArgKey::GcCollected, info_int(info, "collected")},
                                                   {ArgKey::GcUncollectable, info_int(info, "uncollectable")},
                                                   {ArgKey::GcThread, static_cast<int64_t>(syscall(SYS_gettid))}}});
  CompletedRange pause;
  pause.os_tid = kGcTrackTid;
  pause.begin_ns = start_ns;
  pause.end_ns = end_ns;
  pause.name = name;
  pause.args = args;
  pause.kind = RangeKind::Gc;
  Recorder::instance().add_completed({pause});
}

PyObject* gc_callback(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "gc_callback(phase: str, info: dict)");
    return nullptr;
  }
  if (!Recorder::instance().enabled(kChannelGc)) {
    g_start_ns = -1;
    Py_RETURN_NONE;
  }
  if (PyUnicode_CompareWithASCIIString(args[0], "start") == 0) {
    g_start_ns = now_ns();
  } else if (g_start_ns >= 0) {
    const int64_t end_ns = now_ns();
    const int64_t start_ns = g_start_ns;
    g_start_ns = -1;
    if (end_ns - start_ns >= g_threshold_ns.load(std::memory_order_relaxed)) {
      try {
        record_pause(start_ns, end_ns, args[1]);
      } catch (...) {
        // Out of memory: this pause is not recorded; the program goes on.
      }
    }
  }
  Py_RETURN_NONE;
}

PyObject* gc_set_threshold_ns(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const long long threshold = nargs == 1 ? PyLong_AsLongLong(args[0]) : -1;
  if (threshold < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "gc_set_threshold_ns(ns: int >= 0)");
    return nullptr;
  }
  g_threshold_ns.store(threshold, std::memory_order_relaxed);
  Py_RETURN_NONE;
}

PyMethodDef gc_methods[] = {
    {"gc_callback", as_cfunction(gc_callback), METH_FASTCALL,
     "gc_callback(phase, info, /)\n--\n\n"
     "For gc.callbacks: records collections at or above the threshold while the GC channel is on."},
    {"gc_set_threshold_ns", as_cfunction(gc_set_threshold_ns), METH_FASTCALL,
     "gc_set_threshold_ns(ns, /)\n--\n\nThe shortest collection gc_callback records, in nanoseconds."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool add_gc_monitor(PyObject* module) { return PyModule_AddFunctions(module, gc_methods) == 0; }

}  // namespace perfprof::python_hooks
