#pragma once
// What a range or instant is, set by whatever records it: the recorder's callers know what they
// record (a schedule step, an mstx range, a module call...), so nothing later guesses it from a
// name or a category. Exports name each kind as torch.profiler's traces do (category_name).
#include <cstdint>
#include <string_view>

namespace perfprof {

// The numbers are part of the capture format (docs/formats/capture.md): only ever added.
enum class RangeKind : uint8_t {
  Other = 0,           // counters, and ranges of a data source that names no kind
  CpuOp = 1,           // a PyTorch operator
  UserAnnotation = 2,  // record_function, torch's own annotations ("Optimizer.step#SGD.step")
  Step = 3,            // a schedule step: ProfilerStep#N
  Mstx = 4,            // an mstx mark or range
  PythonFunction = 5,  // a Python call (with_stack)
  Module = 6,          // an nn.Module call (with_modules)
  Gc = 7,              // a Python garbage-collection pause
  CudaRuntime = 8,     // a CUDA runtime API call
  CudaDriver = 9,      // a CUDA driver API call
};

// The name of each schedule step's range (RangeKind::Step) is this prefix and the step number,
// as torch names it.
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";

// The category torch.profiler's traces give ranges of `kind` ("cpu_op", "user_annotation",
// "python_function", "gc", "cuda_runtime", "cuda_driver"); "" for Other.
std::string_view category_name(RangeKind kind);

// A user annotation in torch.profiler's sense: record_function, schedule steps, mstx ranges.
inline bool is_annotation(RangeKind kind) {
  return kind == RangeKind::UserAnnotation || kind == RangeKind::Step || kind == RangeKind::Mstx;
}

// A Python frame: a Python call or a module call.
inline bool is_python_frame(RangeKind kind) { return kind == RangeKind::PythonFunction || kind == RangeKind::Module; }

}  // namespace perfprof
