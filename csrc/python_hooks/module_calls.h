#pragma once
// with_modules and profile_memory: a callable put in place of torch.nn.Module.__call__ while
// modules are captured or observed. On threads that capture modules each call becomes a range
// named like torch.profiler's ("nn.Module: Linear_0"); while an observer is set, each module's
// first call is reported to it (memory profiling notes the module's parameters); otherwise it
// only calls the __call__ it replaced. Written in C so a module call costs a vectorcall and a map
// lookup more, not a Python frame; invisible to torch.compile (module_calls.cpp, wrapper_get).
#include <Python.h>

#include "common/string_table.h"

namespace perfprof::python_hooks {

// Adds the ModuleCallWrapper type, module_calls_capture(on), module_calls_observe(callback) and
// module_calls_reset_names().
bool add_module_calls(PyObject* module);

// torch.profiler's name for a call of `module` ("nn.Module: Linear_0"), numbered as the wrapper
// numbers them; the Python tracer names Module.__call__ frames with it. Under the GIL.
StringId module_call_name(PyObject* module);

}  // namespace perfprof::python_hooks
