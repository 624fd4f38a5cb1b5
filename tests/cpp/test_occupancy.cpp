// Theoretical occupancy against hand-worked cases on an H100-like SM (64 warps, 32 blocks,
// 64K registers, 228 KiB shared memory).
#include <gtest/gtest.h>

#include "trace/occupancy.h"

namespace perfprof {
namespace {

GpuDevice sm90() {
  GpuDevice d;
  d.warp_size = 32;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = 65536;
  d.max_registers_per_block = 65536;
  d.max_shared_memory_per_sm = 228 * 1024;
  return d;
}

GpuActivity launch(uint32_t threads, uint16_t registers, uint32_t shared_bytes) {
  GpuActivity k;
  k.block[0] = threads;
  k.block[1] = k.block[2] = 1;
  k.registers_per_thread = registers;
  k.dynamic_shared_memory = shared_bytes;
  return k;
}

TEST(Occupancy, LimitedByWarpSlotsOnly) {
  EXPECT_DOUBLE_EQ(*theoretical_occupancy(launch(256, 32, 0), sm90()), 100.0);  // 8 blocks x 8 warps
}

TEST(Occupancy, LimitedByRegisters) {
  // 64 regs x 32 threads = 2048 per warp; 8 warps = 16384 per block; 65536 / 16384 = 4 blocks.
  EXPECT_DOUBLE_EQ(*theoretical_occupancy(launch(256, 64, 0), sm90()), 50.0);
  // 40 regs round up to 1280 per warp (unit 256): 10240 per block -> 6 blocks = 48 warps.
  EXPECT_DOUBLE_EQ(*theoretical_occupancy(launch(256, 40, 0), sm90()), 75.0);
}

TEST(Occupancy, LimitedBySharedMemory) {
  // 100 KiB per block: 2 blocks of 4 warps fit in 228 KiB.
  EXPECT_DOUBLE_EQ(*theoretical_occupancy(launch(128, 16, 100 * 1024), sm90()), 12.5);
}

TEST(Occupancy, LimitedByBlocksPerSm) {
  // 1-warp blocks: 32 blocks at most = 32 of 64 warps.
  EXPECT_DOUBLE_EQ(*theoretical_occupancy(launch(32, 16, 0), sm90()), 50.0);
}

TEST(Occupancy, UnknownDeviceOrImpossibleLaunchGivesNothing) {
  EXPECT_FALSE(theoretical_occupancy(launch(256, 32, 0), GpuDevice{}).has_value());
  EXPECT_FALSE(theoretical_occupancy(launch(1024, 255, 0), sm90()).has_value()) << "too many registers per block";
  EXPECT_FALSE(theoretical_occupancy(launch(0, 32, 0), sm90()).has_value());
}

}  // namespace
}  // namespace perfprof
