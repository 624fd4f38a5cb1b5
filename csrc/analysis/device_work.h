#pragma once
// What a GPU activity that keeps the device busy is for: computing, communicating between
// ranks, or moving memory. The summaries (kernel_details, step_trace_time) split device time
// by it.
#include <string_view>

#include "trace/trace_model.h"

namespace perfprof {

enum class DeviceWorkType : uint8_t {
  Compute,        // a kernel (or a CUDA graph launch) that is not communication
  Communication,  // a collective library's kernel: NCCL, RCCL
  Memory,         // a memcpy or memset
};

// "Compute", "Communication", "Memory".
std::string_view device_work_type_name(DeviceWorkType type);

// A collective library's kernel, by its name: NCCL's kernels are named ncclKernel_...,
// ncclDevKernel_... (RCCL keeps the names), possibly demangled with a leading "void ".
bool is_communication_kernel(std::string_view name);

// The type of an activity doing device work (is_device_work in op_tree.h).
DeviceWorkType device_work_type(const TraceModel& model, const GpuActivity& activity);

}  // namespace perfprof
