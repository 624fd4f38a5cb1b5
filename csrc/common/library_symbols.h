#pragma once
// Entry points of a library loaded at run time (dlopen): libcupti, libnvidia-ml.
#include <dlfcn.h>

namespace perfprof {

// Sets `out` to the function `symbol` of the dlopen'ed `handle`; false when the library lacks it.
template <typename Function>
bool resolve_symbol(void* handle, const char* symbol, Function* out) {
  *out = reinterpret_cast<Function>(dlsym(handle, symbol));
  return *out != nullptr;
}

}  // namespace perfprof
