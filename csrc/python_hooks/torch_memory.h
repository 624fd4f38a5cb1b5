#pragma once
// Reads what torch's own profiler state recorded for memory profiling (allocator events and the
// operators around them) into the recorder, and the tensors perfprof's hooks saw in known roles.
#include <pybind11/pybind11.h>

namespace perfprof::python_hooks {

void add_torch_memory(pybind11::module_& module);

}  // namespace perfprof::python_hooks
