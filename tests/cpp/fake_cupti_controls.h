#pragma once
// The CUPTI test double's control API (tests/cupti_double/fake_cupti_control.h) for the tests of
// per-kernel metrics, resolved by name from the library perfprof loads as libcupti (and as the
// CUDA driver): the same copy, so controls and CUPTI calls see one state.
#include <dlfcn.h>

#include <string>

#include "../cupti_double/fake_cupti_control.h"
#include "cupti/cupti_library.h"

namespace perfprof::test_double {

struct FakeCupti {
#define FAKE_CUPTI_CONTROLS(X)           \
  X(fake_cupti_reset_keeping_callbacks)  \
  X(fake_cupti_fail)                     \
  X(fake_cupti_launch_kernel)            \
  X(fake_cupti_set_device_chip)          \
  X(fake_cupti_add_chip_metric)          \
  X(fake_cupti_set_kernel_metric)        \
  X(fake_cupti_set_metrics_per_pass)     \
  X(fake_cupti_last_range_config)        \
  X(fake_cupti_profiler_objects)         \
  X(fake_cupti_set_current_context)      \
  X(fake_cupti_context_synchronizations)
#define FAKE_CUPTI_MEMBER(name) decltype(&::name) name = nullptr;
  FAKE_CUPTI_CONTROLS(FAKE_CUPTI_MEMBER)
#undef FAKE_CUPTI_MEMBER

  static FakeCupti& instance() {
    static FakeCupti fake = [] {
      void* handle = dlopen(PERFPROF_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
      FakeCupti f;
#define FAKE_CUPTI_RESOLVE(name) f.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));
      FAKE_CUPTI_CONTROLS(FAKE_CUPTI_RESOLVE)
#undef FAKE_CUPTI_RESOLVE
      return f;
    }();
    return fake;
  }
#undef FAKE_CUPTI_CONTROLS
};

inline FakeCupti& fake() { return FakeCupti::instance(); }

// Loads the double as perfprof's libcupti and CUDA driver (once per process): "" or why not.
inline std::string load_as_cupti() {
  const CuptiStatus& status = CuptiLibrary::instance().load(PERFPROF_FAKE_CUPTI, {}, PERFPROF_FAKE_CUPTI);
  return status.available ? "" : status.reason;
}

}  // namespace perfprof::test_double
