#pragma once
// Theoretical occupancy of a kernel launch: the share of an SM's warp slots its blocks can
// fill, limited by warps, blocks, registers and shared memory per SM (the calculation of
// NVIDIA's occupancy calculator, with its allocation granularities).
#include <optional>

#include "record/gpu_records.h"

namespace perfprof {

// Percent (0-100), or nothing when the device's limits are unknown or the launch cannot fit.
std::optional<double> theoretical_occupancy(const GpuActivity& kernel, const GpuDevice& device);

}  // namespace perfprof
