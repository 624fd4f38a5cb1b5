#pragma once
// The calls user code makes on every step (mstx markers, record_function), written against the
// CPython API directly: a METH_FASTCALL function costs tens of nanoseconds, a pybind11 one several
// times that. Everything else is bound with pybind11 in module.cpp.
#include <Python.h>

namespace perfprof::bindings {

// Adds the functions and the RecordFunction type to `module`. Returns false with a Python
// exception set on failure.
bool add_fast_calls(PyObject* module);

}  // namespace perfprof::bindings
