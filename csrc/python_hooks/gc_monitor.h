#pragma once
// gc_detect_threshold: Python garbage-collection pauses as ranges on the "Python GC" track.
// perfprof's C function is appended to `gc.callbacks`, so timing a collection runs no Python
// code; pauses shorter than the threshold are dropped as they end.
#include <Python.h>

namespace perfprof::python_hooks {

// Adds gc_callback(phase, info) (for gc.callbacks) and gc_set_threshold_ns(ns) to `module`.
bool add_gc_monitor(PyObject* module);

}  // namespace perfprof::python_hooks
