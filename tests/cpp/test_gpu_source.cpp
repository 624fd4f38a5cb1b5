// GPU telemetry (csrc/telemetry/gpu_source, nvml_library) against the NVML test double
// (tests/nvml_double), loaded by path the way perfprof loads libnvidia-ml.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/string_table.h"
#include "telemetry/gpu_source.h"
#include "telemetry/nvml_library.h"

namespace perfprof {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// The double's control API (fake_nvml_control.h), resolved by name from the library perfprof loads.
struct FakeNvml {
  void (*reset)();
  void (*set_device_count)(unsigned);
  void (*set_device)(unsigned, unsigned, unsigned, unsigned long long, unsigned, unsigned, unsigned, unsigned,
                     unsigned);
  void (*set_link_active)(unsigned, unsigned, int);
  void (*add_link_traffic)(unsigned, unsigned, unsigned long long, unsigned long long);
  void (*add_pcie_traffic)(unsigned, unsigned long long, unsigned long long);
  void (*fail)(const char*, int);
  int (*init_count)();

  static const FakeNvml& instance() {
    static const FakeNvml fake = [] {
      void* handle = dlopen(PERFPROF_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
      FakeNvml f{};
      if (!handle) return f;
      resolve(handle, "fake_nvml_reset", f.reset);
      resolve(handle, "fake_nvml_set_device_count", f.set_device_count);
      resolve(handle, "fake_nvml_set_device", f.set_device);
      resolve(handle, "fake_nvml_set_link_active", f.set_link_active);
      resolve(handle, "fake_nvml_add_link_traffic", f.add_link_traffic);
      resolve(handle, "fake_nvml_add_pcie_traffic", f.add_pcie_traffic);
      resolve(handle, "fake_nvml_fail", f.fail);
      resolve(handle, "fake_nvml_init_count", f.init_count);
      return f;
    }();
    return fake;
  }

 private:
  template <typename Function>
  static void resolve(void* handle, const char* name, Function& out) {
    out = reinterpret_cast<Function>(dlsym(handle, name));
  }
};

const FakeNvml& fake() { return FakeNvml::instance(); }

// The value of `metric` for `instance` among `readings`, if there is exactly one.
std::optional<double> value_of(const std::vector<Reading>& readings, CounterMetric metric,
                               const std::string& instance) {
  const StringId id = global_strings().intern(instance);
  std::optional<double> found;
  for (const Reading& reading : readings) {
    if (reading.metric != metric || reading.instance != id) continue;
    if (found) return std::nullopt;
    found = reading.value;
  }
  return found;
}

size_t count_of(const std::vector<Reading>& readings, CounterMetric metric) {
  size_t count = 0;
  for (const Reading& reading : readings) count += reading.metric == metric;
  return count;
}

class GpuSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(fake().reset, nullptr) << "cannot load " << PERFPROF_FAKE_NVML;
    fake().reset();
    fake().set_device_count(2);
    // util gpu/mem %, memory used, power mW, SM MHz, temperature C, PCIe rx/tx KB/s
    fake().set_device(0, 87, 45, 12ull << 30, 312'500, 1'980, 64, 100, 25);
    fake().set_device(1, 3, 1, 512ull << 20, 71'000, 345, 38, 0, 4);
  }
  void TearDown() override { EXPECT_EQ(fake().init_count(), 0) << "a test left NVML initialised"; }

  static std::unique_ptr<GpuSource> open(GpuSourceOptions options = {}) {
    std::string error;
    std::unique_ptr<GpuSource> source = open_gpu_source(options, PERFPROF_FAKE_NVML, error);
    EXPECT_NE(source, nullptr) << error;
    EXPECT_EQ(error, "");
    return source;
  }

  // Reads `source` at `now_ns`: its readings, and its message in `message`.
  static std::vector<Reading> sample(GpuSource& source, int64_t now_ns, std::string& message) {
    std::vector<Reading> readings;
    message = source.sample(now_ns, readings);
    return readings;
  }
  static std::vector<Reading> sample(GpuSource& source, int64_t now_ns) {
    std::string message;
    std::vector<Reading> readings = sample(source, now_ns, message);
    EXPECT_EQ(message, "");
    return readings;
  }
};

TEST_F(GpuSourceTest, ReadsEveryMetricOfEachGpu) {
  const auto source = open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->name(), "NVML");
  EXPECT_EQ(source->devices(), 2u);
  const std::vector<Reading> readings = sample(*source, kSecond);

  EXPECT_EQ(readings.size(), 12u);  // six per GPU: no PCIe or NVLink unless asked
  EXPECT_EQ(value_of(readings, CounterMetric::GpuUtilization, "GPU 0"), 87);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuMemoryUtilization, "GPU 0"), 45);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuMemoryUsed, "GPU 0"), double(12ull << 30));
  EXPECT_EQ(value_of(readings, CounterMetric::GpuPower, "GPU 0"), 312.5);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuSmClock, "GPU 0"), 1'980);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuTemperature, "GPU 0"), 64);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuUtilization, "GPU 1"), 3);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuMemoryUtilization, "GPU 1"), 1);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuMemoryUsed, "GPU 1"), double(512ull << 20));
  EXPECT_EQ(value_of(readings, CounterMetric::GpuPower, "GPU 1"), 71);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuSmClock, "GPU 1"), 345);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuTemperature, "GPU 1"), 38);

  // Levels: a later sample reads the values of its time.
  fake().set_device(1, 99, 1, 0, 71'000, 345, 38, 0, 0);
  EXPECT_EQ(value_of(sample(*source, 2 * kSecond), CounterMetric::GpuUtilization, "GPU 1"), 99);
}

TEST_F(GpuSourceTest, ShutsNvmlDownWhenDestroyed) {
  auto source = open();
  EXPECT_EQ(fake().init_count(), 1);
  source.reset();
  EXPECT_EQ(fake().init_count(), 0);
}

TEST_F(GpuSourceTest, PcieThroughputInBytesPerSecond) {
  GpuSourceOptions options;
  options.pcie = true;
  const auto source = open(options);
  ASSERT_NE(source, nullptr);
  const std::vector<Reading> readings = sample(*source, kSecond);
  EXPECT_EQ(readings.size(), 16u);
  EXPECT_EQ(value_of(readings, CounterMetric::PcieReceive, "GPU 0"), 100 * 1024);
  EXPECT_EQ(value_of(readings, CounterMetric::PcieTransmit, "GPU 0"), 25 * 1024);
  EXPECT_EQ(value_of(readings, CounterMetric::PcieReceive, "GPU 1"), 0);
  EXPECT_EQ(value_of(readings, CounterMetric::PcieTransmit, "GPU 1"), 4 * 1024);
}

// GPU 0 has the byte counters (Hopper and later): rates from their deltas, and the throughput
// query, which may wait out NVML's 20 ms window, is not made; GPU 1 lacks them and is asked.
TEST_F(GpuSourceTest, PcieRatesFromByteCountersWhereTheGpuHasThem) {
  fake().add_pcie_traffic(0, 1'000, 2'000);
  fake().fail("nvmlDeviceGetPcieThroughput:0", NVML_ERROR_UNKNOWN);  // must not be called
  GpuSourceOptions options;
  options.pcie = true;
  const auto source = open(options);
  ASSERT_NE(source, nullptr);
  const std::vector<Reading> first = sample(*source, kSecond);
  EXPECT_EQ(value_of(first, CounterMetric::PcieReceive, "GPU 0"), std::nullopt);  // no rate yet
  EXPECT_EQ(value_of(first, CounterMetric::PcieTransmit, "GPU 1"), 4 * 1024);

  fake().add_pcie_traffic(0, 3'000'000, 500);
  const std::vector<Reading> second = sample(*source, kSecond + kSecond / 4);
  EXPECT_EQ(value_of(second, CounterMetric::PcieReceive, "GPU 0"), 3'000'000 * 4);
  EXPECT_EQ(value_of(second, CounterMetric::PcieTransmit, "GPU 0"), 500 * 4);
  EXPECT_EQ(value_of(second, CounterMetric::PcieReceive, "GPU 1"), 0);
}

TEST_F(GpuSourceTest, NvlinkRatesFromCounterDeltasOfActiveLinks) {
  // GPU 0: links 0 and 2 active, link 1 down (its traffic must not show); GPU 1: no NVLink.
  fake().set_link_active(0, 0, 1);
  fake().set_link_active(0, 1, 0);
  fake().set_link_active(0, 2, 1);
  fake().add_link_traffic(0, 0, 5'000, 7'000);  // before the first sample: no rate
  GpuSourceOptions options;
  options.nvlink = true;
  const auto source = open(options);
  ASSERT_NE(source, nullptr);

  const std::vector<Reading> first = sample(*source, kSecond);
  EXPECT_EQ(count_of(first, CounterMetric::NvlinkReceive) + count_of(first, CounterMetric::NvlinkTransmit), 0u);

  fake().add_link_traffic(0, 0, 1'000, 500);
  fake().add_link_traffic(0, 1, 9'999, 9'999);
  fake().add_link_traffic(0, 2, 2'000, 0);
  const std::vector<Reading> second = sample(*source, kSecond + kSecond / 2);
  EXPECT_EQ(count_of(second, CounterMetric::NvlinkReceive), 2u);
  EXPECT_EQ(count_of(second, CounterMetric::NvlinkTransmit), 2u);
  EXPECT_EQ(value_of(second, CounterMetric::NvlinkReceive, "GPU 0 NVLink 0"), 1'000 * 1024 * 2);
  EXPECT_EQ(value_of(second, CounterMetric::NvlinkTransmit, "GPU 0 NVLink 0"), 500 * 1024 * 2);
  EXPECT_EQ(value_of(second, CounterMetric::NvlinkReceive, "GPU 0 NVLink 2"), 2'000 * 1024 * 2);
  EXPECT_EQ(value_of(second, CounterMetric::NvlinkTransmit, "GPU 0 NVLink 2"), 0);
  EXPECT_EQ(value_of(second, CounterMetric::NvlinkReceive, "GPU 0 NVLink 1"), std::nullopt);

  // Each rate is over its own interval: nothing moved in the next quarter second.
  const std::vector<Reading> third = sample(*source, 2 * kSecond);
  EXPECT_EQ(value_of(third, CounterMetric::NvlinkReceive, "GPU 0 NVLink 0"), 0);
}

TEST_F(GpuSourceTest, NotSupportedDropsTheMetricSilentlyForTheSession) {
  fake().fail("nvmlDeviceGetPowerUsage", NVML_ERROR_NOT_SUPPORTED);
  const auto source = open();
  ASSERT_NE(source, nullptr);
  const std::vector<Reading> first = sample(*source, kSecond);  // expects no message
  EXPECT_EQ(count_of(first, CounterMetric::GpuPower), 0u);
  EXPECT_EQ(first.size(), 10u);
  EXPECT_EQ(value_of(first, CounterMetric::GpuTemperature, "GPU 0"), 64);

  // Not asked again, even once the double would answer.
  fake().fail("nvmlDeviceGetPowerUsage", NVML_SUCCESS);
  EXPECT_EQ(count_of(sample(*source, 2 * kSecond), CounterMetric::GpuPower), 0u);
}

TEST_F(GpuSourceTest, OtherErrorsSkipTheReadingWithAMessage) {
  fake().fail("nvmlDeviceGetPowerUsage:1", NVML_ERROR_UNKNOWN);
  const auto source = open();
  ASSERT_NE(source, nullptr);
  std::string message;
  const std::vector<Reading> readings = sample(*source, kSecond, message);
  EXPECT_EQ(message, "nvmlDeviceGetPowerUsage on GPU 1: Unknown Error (999)");
  EXPECT_EQ(readings.size(), 11u);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuPower, "GPU 0"), 312.5);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuPower, "GPU 1"), std::nullopt);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuTemperature, "GPU 1"), 38);

  // Such an error may pass: the metric is asked again.
  fake().fail("nvmlDeviceGetPowerUsage:1", NVML_SUCCESS);
  EXPECT_EQ(value_of(sample(*source, 2 * kSecond), CounterMetric::GpuPower, "GPU 1"), 71);
}

TEST_F(GpuSourceTest, AGpuWithoutAHandleIsLeftOutAndReportedOnce) {
  fake().fail("nvmlDeviceGetHandleByIndex_v2:0", NVML_ERROR_GPU_IS_LOST);
  const auto source = open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->devices(), 1u);
  std::string message;
  const std::vector<Reading> readings = sample(*source, kSecond, message);
  EXPECT_EQ(message, "nvmlDeviceGetHandleByIndex(0): GPU is lost (15)");
  EXPECT_EQ(readings.size(), 6u);
  EXPECT_EQ(value_of(readings, CounterMetric::GpuUtilization, "GPU 1"), 3);
  sample(*source, 2 * kSecond);  // expects no message
}

// The sampler thread reads while the job (here: the test) changes what the GPU reports.
TEST_F(GpuSourceTest, ReadsOnAnotherThreadWhileValuesChange) {
  fake().set_device(0, 10, 0, 0, 0, 0, 0, 0, 0);
  const auto source = open();
  ASSERT_NE(source, nullptr);
  std::thread sampler([&] {
    for (int64_t i = 1; i <= 2'000; ++i) {
      const std::optional<double> busy = value_of(sample(*source, i * kSecond), CounterMetric::GpuUtilization, "GPU 0");
      ASSERT_TRUE(busy == 10 || busy == 20) << (busy ? *busy : -1);
    }
  });
  for (int i = 0; i < 2'000; ++i) fake().set_device(0, i % 2 ? 10 : 20, 0, 0, 0, 0, 0, 0, 0);
  sampler.join();
}

TEST_F(GpuSourceTest, AMissingLibraryIsNamed) {
  std::string error;
  const auto source = open_gpu_source({}, "/nonexistent/libnvidia-ml.so.1", error);
  EXPECT_EQ(source, nullptr);
  EXPECT_EQ(error.rfind("/nonexistent/libnvidia-ml.so.1 not found: ", 0), 0u) << error;
}

TEST_F(GpuSourceTest, AFailedInitGivesNvmlsError) {
  fake().fail("nvmlInit_v2", NVML_ERROR_DRIVER_NOT_LOADED);
  std::string error;
  EXPECT_EQ(open_gpu_source({}, PERFPROF_FAKE_NVML, error), nullptr);
  EXPECT_EQ(error, "nvmlInit failed: Driver Not Loaded (9)");
}

TEST_F(GpuSourceTest, NoGpu) {
  fake().set_device_count(0);
  std::string error;
  EXPECT_EQ(open_gpu_source({}, PERFPROF_FAKE_NVML, error), nullptr);
  EXPECT_EQ(error, "no GPU");  // and NVML is shut down again (TearDown)
}

class NvmlLibraryTest : public GpuSourceTest {};

TEST_F(NvmlLibraryTest, ProbeReportsTheLibraryAndItsGpus) {
  const NvmlStatus status = probe_nvml(PERFPROF_FAKE_NVML);
  EXPECT_TRUE(status.available) << status.reason;
  EXPECT_EQ(status.library, PERFPROF_FAKE_NVML);
  EXPECT_EQ(status.devices, 2u);
  EXPECT_EQ(status.reason, "");
}

TEST_F(NvmlLibraryTest, LoadsEachLocationOncePerProcess) {
  EXPECT_EQ(&NvmlLibrary::load(PERFPROF_FAKE_NVML), &NvmlLibrary::load(PERFPROF_FAKE_NVML));
  const NvmlLibrary& missing = NvmlLibrary::load("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(missing.status().available);
  EXPECT_EQ(&missing, &NvmlLibrary::load("/nonexistent/libnvidia-ml.so.1"));
}

TEST_F(NvmlLibraryTest, RejectsALibraryThatIsNotNvml) {
  const NvmlStatus& status = NvmlLibrary::load(PERFPROF_FAKE_CUPTI).status();
  EXPECT_FALSE(status.available);
  EXPECT_EQ(status.reason, std::string(PERFPROF_FAKE_CUPTI) + " is not a usable libnvidia-ml (no nvmlInit_v2)");
}

TEST_F(NvmlLibraryTest, DescribesCodesWithNvmlsText) {
  const NvmlLibrary& library = NvmlLibrary::load(PERFPROF_FAKE_NVML);
  EXPECT_EQ(library.describe(NVML_ERROR_NOT_SUPPORTED), "Not Supported (3)");
}

}  // namespace
}  // namespace perfprof
