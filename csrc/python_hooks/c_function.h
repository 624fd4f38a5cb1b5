#pragma once
// A METH_FASTCALL function as the PyCFunction a PyMethodDef stores (CPython casts it back).
#include <Python.h>

namespace perfprof::python_hooks {

template <typename Function>
PyCFunction as_cfunction(Function function) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function));
}

}  // namespace perfprof::python_hooks
