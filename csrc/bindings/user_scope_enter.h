#pragma once
// What stands in for torch.profiler.record_function.__enter__ while operators are captured
// through torch's ITT/NVTX observers (python/perfprof/torch_capture.py): around the __enter__ it
// replaced, it tells the stubs (torch_hooks/operator_ranges.h, user_scope_begins) that the range
// torch begins meanwhile on the calling thread is a user annotation, as torch.profiler files it.
// Written in C, so it adds no Python frame: with_stack sees torch's __enter__ called from the
// script, as under torch.profiler, and the call costs a vectorcall more.
#include <Python.h>

namespace perfprof::bindings {

// Adds the UserScopeEnter type to `module`. Returns false with a Python exception set on failure.
bool add_user_scope_enter(PyObject* module);

}  // namespace perfprof::bindings
