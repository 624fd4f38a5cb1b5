#pragma once
// with_stack: Python function calls and returns recorded by C callbacks straight into the
// calling thread's buffer (sys.monitoring on Python 3.12+, a per-thread profile hook before), as `python_function` ranges named like torch.profiler's
// ("path/to/file.py(12): step", "<built-in method relu of type object>"). No Python object is
// kept per event: names are interned once per code object / built-in.
#include <Python.h>

namespace perfprof::bindings {

// Adds python_tracer_install(skip_prefix) and python_tracer_uninstall() to `module`.
bool add_python_tracer(PyObject* module);

}  // namespace perfprof::bindings
