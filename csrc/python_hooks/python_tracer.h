#pragma once
// with_stack: Python and built-in calls recorded by C callbacks straight into the calling thread's
// buffer (sys.monitoring on Python 3.12+, a per-thread profile hook before), as `python_function`
// ranges: the calls torch.profiler's tracer records, named as it names them
// (python_call_names.h), the frames running when the kept window begins included, perfprof's own
// calls and what they call excluded. No Python object is kept per event.
#include <Python.h>

namespace perfprof::python_hooks {

// Adds python_tracer_install(own_prefix, path_prefixes, module_call_code),
// python_tracer_window_begin() and python_tracer_uninstall() to `module`.
bool add_python_tracer(PyObject* module);

}  // namespace perfprof::python_hooks
