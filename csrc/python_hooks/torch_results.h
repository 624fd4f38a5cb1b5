#pragma once
// Operators recorded by torch's own profiler state (ProfilerState.KINETO, CPU activity only),
// brought into perfprof's recorder at stop. perfprof uses that state where it needs what only
// torch's collection has: input dtypes, strides and scalar argument values.
#include <pybind11/pybind11.h>

namespace perfprof::python_hooks {

// Adds import_torch_events(events) to `module`.
void add_torch_results(pybind11::module_& module);

}  // namespace perfprof::python_hooks
