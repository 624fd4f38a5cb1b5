// Theoretical occupancy against hand-worked cases on an H100-like SM (64 warps, 32 blocks,
// 64K registers, 228 KiB shared memory), and the GPU metrics analysis derives once per trace.
#include <gtest/gtest.h>

#include "analysis/gpu_metrics.h"
#include "analysis/occupancy.h"

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

// Per activity: kernels on a device with known limits get blocks and warps per SM and
// occupancy, copies their bandwidth, everything else nothing.
TEST(GpuMetrics, DerivedOncePerActivityAsTheExportersShowThem) {
  TraceModel model;
  GpuDevice device = sm90();
  device.id = 0;
  device.sm_count = 132;
  model.gpu.devices.push_back(device);
  GpuActivity kernel = launch(256, 32, 0);
  kernel.kind = GpuActivityKind::Kernel;
  kernel.grid[0] = 264;
  kernel.grid[1] = kernel.grid[2] = 1;
  GpuActivity elsewhere = kernel;
  elsewhere.device = 7;  // a device whose limits are unknown
  GpuActivity copy;
  copy.kind = GpuActivityKind::Memcpy;
  copy.start_ns = 1'000;
  copy.end_ns = 3'000;
  copy.bytes = 5'000;
  GpuActivity memset;
  memset.kind = GpuActivityKind::Memset;
  model.gpu.activities = {kernel, elsewhere, copy, memset};

  const GpuMetrics metrics = gpu_metrics(model);
  EXPECT_DOUBLE_EQ(metrics.blocks_per_sm[0].value(), 2.0);   // 264 blocks / 132 SMs
  EXPECT_DOUBLE_EQ(metrics.warps_per_sm[0].value(), 16.0);   // 8 warps a block
  EXPECT_DOUBLE_EQ(metrics.occupancy_percent[0].value(), 100.0);
  EXPECT_FALSE(metrics.bandwidth_gb_per_s[0].has_value());
  EXPECT_FALSE(metrics.blocks_per_sm[1].has_value());
  EXPECT_FALSE(metrics.occupancy_percent[1].has_value());
  EXPECT_DOUBLE_EQ(metrics.bandwidth_gb_per_s[2].value(), 2.5);  // 5000 bytes in 2000 ns
  EXPECT_FALSE(metrics.occupancy_percent[2].has_value());
  for (const auto* column : {&metrics.blocks_per_sm, &metrics.warps_per_sm, &metrics.occupancy_percent,
                             &metrics.bandwidth_gb_per_s}) {
    EXPECT_FALSE((*column)[3].has_value());
  }
}

}  // namespace
}  // namespace perfprof
