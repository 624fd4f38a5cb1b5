#include "record/range_kind.h"

namespace perfprof {

std::string_view category_name(RangeKind kind) {
  switch (kind) {
    case RangeKind::CpuOp: return "cpu_op";
    case RangeKind::UserAnnotation:
    case RangeKind::Step:
    case RangeKind::Mstx: return "user_annotation";
    case RangeKind::PythonFunction:
    case RangeKind::Module: return "python_function";
    case RangeKind::Gc: return "gc";
    case RangeKind::CudaRuntime: return "cuda_runtime";
    case RangeKind::CudaDriver: return "cuda_driver";
    case RangeKind::Other: break;
  }
  return "";
}

}  // namespace perfprof
