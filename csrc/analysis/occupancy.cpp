#include "analysis/occupancy.h"

#include <algorithm>
#include <cstdint>

namespace perfprof {
namespace {

constexpr uint64_t kRegisterAllocationUnit = 256;     // registers, allocated per warp
constexpr uint64_t kSharedMemoryAllocationUnit = 128;  // bytes, per block

uint64_t round_up(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

}  // namespace

std::optional<double> theoretical_occupancy(const GpuActivity& kernel, const GpuDevice& device) {
  const uint64_t threads = uint64_t{kernel.block[0]} * kernel.block[1] * kernel.block[2];
  if (threads == 0 || device.warp_size == 0 || device.max_warps_per_sm == 0 || device.max_blocks_per_sm == 0) {
    return std::nullopt;
  }
  const uint64_t warps_per_block = (threads + device.warp_size - 1) / device.warp_size;
  uint64_t blocks = std::min<uint64_t>(device.max_blocks_per_sm, device.max_warps_per_sm / warps_per_block);

  if (kernel.registers_per_thread > 0 && device.max_registers_per_sm > 0) {
    const uint64_t per_warp = round_up(uint64_t{kernel.registers_per_thread} * device.warp_size, kRegisterAllocationUnit);
    const uint64_t per_block = per_warp * warps_per_block;
    if (device.max_registers_per_block > 0 && per_block > device.max_registers_per_block) return std::nullopt;
    blocks = std::min(blocks, device.max_registers_per_sm / per_block);
  }
  const uint64_t shared = static_cast<uint64_t>(std::max(kernel.static_shared_memory, 0)) + kernel.dynamic_shared_memory;
  if (shared > 0 && device.max_shared_memory_per_sm > 0) {
    blocks = std::min(blocks, device.max_shared_memory_per_sm / round_up(shared, kSharedMemoryAllocationUnit));
  }
  if (blocks == 0) return std::nullopt;
  return 100.0 * double(blocks * warps_per_block) / double(device.max_warps_per_sm);
}

}  // namespace perfprof
