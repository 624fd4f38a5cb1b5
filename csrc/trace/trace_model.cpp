#include "trace/trace_model.h"

#include <array>
#include <utility>

namespace perfprof {

RangeKind range_kind_of(std::string_view category) {
  static constexpr std::array<std::pair<std::string_view, RangeKind>, 6> kKinds{{
      {"cpu_op", RangeKind::CpuOp},
      {"user_annotation", RangeKind::UserAnnotation},
      {kPythonFunctionCategory, RangeKind::PythonFunction},
      {"gc", RangeKind::Gc},
      {"cuda_runtime", RangeKind::CudaRuntime},
      {"cuda_driver", RangeKind::CudaDriver},
  }};
  for (const auto& [name, kind] : kKinds) {
    if (name == category) return kind;
  }
  return RangeKind::Other;
}

}  // namespace perfprof
