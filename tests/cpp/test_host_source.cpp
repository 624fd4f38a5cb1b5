#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/clock.h"
#include "record/counter_metric.h"
#include "telemetry/host_source.h"
#include "test_util.h"

namespace perfprof {
namespace {

using test::TempDir;
using test::write_file;

constexpr pid_t kPid = 4242;
constexpr int64_t kT0 = 1'000'000'000;
constexpr int64_t kInterval = 20'000'000;  // 20 ms between the two snapshots
constexpr double kSeconds = 0.020;
constexpr HostGroups kCpu{true, false, false, false};
constexpr HostGroups kMem{false, true, false, false};
constexpr HostGroups kDisk{false, false, true, false};
constexpr HostGroups kNetwork{false, false, false, true};
constexpr HostGroups kAll{true, true, true, true};

// Readings by "<metric title>/<instance>", e.g. "Disk Read/sda".
using Values = std::map<std::string, double>;

Values values_of(const std::vector<Reading>& readings) {
  Values values;
  for (const Reading& reading : readings) {
    const std::string key = fmt::format("{}/{}", counter_metric_info(reading.metric).title,
                                        global_strings().text(reading.instance));
    EXPECT_TRUE(values.emplace(key, reading.value).second) << "two readings of " << key;
  }
  return values;
}

std::vector<std::string> keys_of(const Values& values) {
  std::vector<std::string> keys;
  for (const auto& entry : values) keys.push_back(entry.first);
  return keys;
}

void expect_values(const Values& actual, const Values& expected) {
  ASSERT_EQ(keys_of(actual), keys_of(expected));
  for (const auto& [key, value] : expected) EXPECT_DOUBLE_EQ(actual.at(key), value) << key;
}

// The two snapshots of a fake /proc, 20 ms apart. Files are rewritten in place (write_file
// truncates the same inode), as HostSource keeps them open.
const char* const kStat[2] = {
    "cpu  2000 10 800 16000 400 20 30 40 100 0\n"
    "cpu0 1000 5 400 8000 200 10 15 20 50 0\n"
    "cpu1 1000 5 400 8000 200 10 15 20 50 0\n"
    "cpu3 12 x 5 7\n"
    "intr 123456 1 2 3 4\n"
    "ctxt 987654\n"
    "btime 1700000000\n",
    // cpu0: user +2 system +1 irq +1 softirq +1 steal +1 (busy 6), idle +2 iowait +2, guest +2
    // (in user already): 6 of 10. cpu1: nice +4, idle +3 iowait +1: 4 of 8. all: 10 of 18.
    // cpu2 comes online.
    "cpu  2002 14 801 16005 403 21 31 41 102 0\n"
    "cpu0 1002 5 401 8002 202 11 16 21 52 0\n"
    "cpu1 1000 9 400 8003 201 10 15 20 50 0\n"
    "cpu2 10 0 10 100 0 0 0 0 0 0\n"
    "cpu3 12 x 5 9\n"
    "intr 123999 1 2 3 4\n"
    "ctxt 987999\n"
    "btime 1700000000\n",
};

// The comm "x) (y z" holds ") (" and blanks; tpgid is -1. utime stime: 250 50, then 252 51.
const char* const kProcessStat[2] = {
    "4242 (x) (y z) S 1 4242 4242 0 -1 4194560 1000 0 5 0 250 50 0 0 20 0 3 0 12345 100000000 2500\n",
    "4242 (x) (y z) S 1 4242 4242 0 -1 4194560 1010 0 5 0 252 51 0 0 20 0 3 0 12345 100000000 2600\n",
};

const char* const kMeminfo[2] = {
    "MemTotal:       16000000 kB\nMemFree:         2000000 kB\nMemAvailable:    6000000 kB\n"
    "Buffers:          100000 kB\n",
    "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    5000000 kB\n"
    "Buffers:          100000 kB\n",
};

const char* const kStatm[2] = {"50000 12000 3000 100 0 20000 0\n", "51000 13000 3000 100 0 21000 0\n"};

const char* const kDiskstats[2] = {
    "   7       0 loop0 100 0 2000 10 0 0 0 0 0 10 10 0 0 0 0 0 0\n"
    "   1       0 ram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 252       0 zram0 50 0 400 1 60 0 480 1 0 2 2 0 0 0 0 0 0\n"
    "   8       0 sda 1000 10 80000 500 2000 20 160000 900 0 1000 1400 0 0 0 0 0 0\n"
    "   8       1 sda1 900 10 70000 400 1900 20 150000 800 0 900 1200 0 0 0 0 0 0\n"
    "   8      16 sdb 300 0 9000 30 400 0 12000 40 0 70 70 0 0 0 0 0 0\n"
    "   8      48 sdd 1 2\n"
    " 259       0 nvme0n1 500 0 40000 100 600 0 48000 200 0 300 300 0 0 0 0 0 0\n"
    " 259       1 nvme0n1p1 400 0 30000 90 500 0 40000 190 0 280 280 0 0 0 0 0 0\n"
    " 179       0 mmcblk0 70 0 5600 7 80 0 6400 8 0 15 15\n"
    " 179       1 mmcblk0p1 60 0 4800 6 70 0 5600 7 0 13 13\n"
    "   9     127 md127 20 0 160 2 30 0 240 3 0 5 5 0 0 0 0 0 0\n"
    " 253       0 dm-0 40 0 320 4 50 0 400 5 0 9 9 0 0 0 0 0 0\n",
    // sectors read/written: sda +100/+40, nvme0n1 +0/+200, mmcblk0 +10/+0, md127 +2/+4,
    // dm-0 +1/+0; sdb was reset (both go backwards); sdc appears; partitions and loop, ram and
    // zram devices move too.
    "   7       0 loop0 110 0 2200 10 0 0 0 0 0 10 10 0 0 0 0 0 0\n"
    "   1       0 ram0 0 0 8 0 0 0 8 0 0 0 0 0 0 0 0 0 0\n"
    " 252       0 zram0 50 0 480 1 60 0 560 1 0 2 2 0 0 0 0 0 0\n"
    "   8       0 sda 1010 10 80100 500 2004 20 160040 900 0 1000 1400 0 0 0 0 0 0\n"
    "   8       1 sda1 910 10 70100 400 1904 20 150040 800 0 900 1200 0 0 0 0 0 0\n"
    "   8      16 sdb 3 0 10 1 4 0 20 1 0 1 1 0 0 0 0 0 0\n"
    "   8      32 sdc 5 0 40 1 6 0 48 1 0 2 2 0 0 0 0 0 0\n"
    "   8      48 sdd 1 2\n"
    " 259       0 nvme0n1 500 0 40000 100 620 0 48200 200 0 300 300 0 0 0 0 0 0\n"
    " 259       1 nvme0n1p1 400 0 30000 90 520 0 40200 190 0 280 280 0 0 0 0 0 0\n"
    " 179       0 mmcblk0 71 0 5610 7 80 0 6400 8 0 15 15\n"
    " 179       1 mmcblk0p1 61 0 4810 6 70 0 5600 7 0 13 13\n"
    "   9     127 md127 21 0 162 2 31 0 244 3 0 5 5 0 0 0 0 0 0\n"
    " 253       0 dm-0 41 0 321 4 50 0 400 5 0 9 9 0 0 0 0 0 0\n",
};

const char* const kNetHeader =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n";

// rx/tx bytes: lo +1000/+1000, eth0 +2000/+400, eth1 (no blank after the colon) +200/+100;
// wlan0's rx goes backwards (a 32-bit counter wrapping), its tx +20; docker0 appears.
const char* const kNetDev[2] = {
    "    lo:    5000      50    0    0    0     0          0         0     5000      50    0    0    0     0       0          0\n"
    "  eth0:  100000     100    0    0    0     0          0         0    20000      40    0    0    0     0       0          0\n"
    "  eth1:300 3 0 0 0 0 0 0 600 6 0 0 0 0 0 0\n"
    " wlan0: 4000000000 10 0 0 0 0 0 0 7000 7 0 0 0 0 0 0\n"
    "   bad: 1 2 3\n",
    "    lo:    6000      60    0    0    0     0          0         0     6000      60    0    0    0     0       0          0\n"
    "  eth0:  102000     120    0    0    0     0          0         0    20400      44    0    0    0     0       0          0\n"
    "  eth1:500 5 0 0 0 0 0 0 700 7 0 0 0 0 0 0\n"
    " wlan0: 1000 12 0 0 0 0 0 0 7020 8 0 0 0 0 0 0\n"
    "docker0: 90 1 0 0 0 0 0 0 80 1 0 0 0 0 0 0\n"
    "   bad: 1 2 3\n",
};

class HostSourceFakeProc : public ::testing::Test {
 protected:
  HostSourceFakeProc() { std::filesystem::create_directories(dir_.path() / std::to_string(kPid) / "net"); }

  std::string path(const std::string& name) const { return dir_.file(name); }
  std::string process_path(const std::string& name) const { return dir_.file(fmt::format("{}/{}", kPid, name)); }

  // Writes every file of snapshot `index` (0 or 1) but those in `missing`.
  void write_snapshot(int index, const std::vector<std::string>& missing = {}) const {
    const std::pair<std::string, std::string> files[] = {
        {path("stat"), kStat[index]},
        {process_path("stat"), kProcessStat[index]},
        {path("meminfo"), kMeminfo[index]},
        {process_path("statm"), kStatm[index]},
        {path("diskstats"), kDiskstats[index]},
        {process_path("net/dev"), std::string(kNetHeader) + kNetDev[index]},
    };
    for (const auto& [file, text] : files) {
      if (std::find(missing.begin(), missing.end(), file) == missing.end()) write_file(file, text);
    }
  }

  HostSource source(HostGroups groups) const { return HostSource(groups, dir_.path().string(), kPid); }

  // Samples at `now`, expecting no error message.
  static Values sample(HostSource& source, int64_t now) {
    std::vector<Reading> readings;
    EXPECT_EQ(source.sample(now, readings), "");
    return values_of(readings);
  }

  // The readings of the second snapshot, after a first sample of the first one.
  Values second_sample(HostGroups groups) const {
    write_snapshot(0);
    HostSource host = source(groups);
    sample(host, kT0);
    write_snapshot(1);
    return sample(host, kT0 + kInterval);
  }

  TempDir dir_;
};

TEST_F(HostSourceFakeProc, FirstSampleGivesLevelsOnly) {
  write_snapshot(0);
  HostSource host = source(kAll);
  EXPECT_EQ(host.name(), "host cpu mem disk network");
  expect_values(sample(host, kT0), {
                                       {"Memory Used/host", 10'000'000.0 * 1024},
                                       {"Memory Available/host", 6'000'000.0 * 1024},
                                       {"Process RSS/process", 12000.0 * sysconf(_SC_PAGESIZE)},
                                   });
}

TEST_F(HostSourceFakeProc, CpuUsagePerCoreAndAll) {
  // cpu2 (online since the second snapshot) has no rate yet; cpu3's lines are malformed.
  const double process = 3 / kSeconds * (100.0 / static_cast<double>(sysconf(_SC_CLK_TCK)));
  expect_values(second_sample(kCpu), {
                                         {"CPU Usage/all", 100.0 * 10 / 18},
                                         {"CPU Usage/cpu0", 60},
                                         {"CPU Usage/cpu1", 50},
                                         {"Process CPU Usage/process", process},
                                     });
}

TEST_F(HostSourceFakeProc, ProcessStatIsReadAfterTheLastParenthesis) {
  // The comm "a) 1 2 (b": parsed from the first ')', every field would shift by three.
  write_file(path("stat"), kStat[0]);
  write_file(process_path("stat"), "4242 (a) 1 2 (b) S 1 2 3 4 -1 6 7 8 9 10 100 0 0 0\n");
  HostSource host = source(kCpu);
  sample(host, kT0);
  write_file(process_path("stat"), "4242 (a) 1 2 (b) S 1 2 3 4 -1 6 7 8 9 10 101 1 0 0\n");
  const Values values = sample(host, kT0 + kInterval);
  EXPECT_DOUBLE_EQ(values.at("Process CPU Usage/process"),
                   2 / kSeconds * (100.0 / static_cast<double>(sysconf(_SC_CLK_TCK))));
}

TEST_F(HostSourceFakeProc, MemoryLevels) {
  expect_values(second_sample(kMem), {
                                         {"Memory Used/host", 11'000'000.0 * 1024},
                                         {"Memory Available/host", 5'000'000.0 * 1024},
                                         {"Process RSS/process", 13000.0 * sysconf(_SC_PAGESIZE)},
                                     });
}

TEST_F(HostSourceFakeProc, DiskRatesOfWholeDisksOnly) {
  // Left out: loop0, ram0, zram0; the partitions sda1, nvme0n1p1, mmcblk0p1; sdb (reset), sdc
  // (new), sdd (malformed).
  const auto rate = [](double sectors) { return sectors * 512 / kSeconds; };
  expect_values(second_sample(kDisk), {
                                          {"Disk Read/sda", rate(100)},
                                          {"Disk Write/sda", rate(40)},
                                          {"Disk Read/nvme0n1", 0},
                                          {"Disk Write/nvme0n1", rate(200)},
                                          {"Disk Read/mmcblk0", rate(10)},
                                          {"Disk Write/mmcblk0", 0},
                                          {"Disk Read/md127", rate(2)},
                                          {"Disk Write/md127", rate(4)},
                                          {"Disk Read/dm-0", rate(1)},
                                          {"Disk Write/dm-0", 0},
                                      });
}

TEST_F(HostSourceFakeProc, NetworkRatesIncludeLoopback) {
  // wlan0's receive went backwards and docker0 is new: no rate; "bad" is malformed.
  const auto rate = [](double bytes) { return bytes / kSeconds; };
  expect_values(second_sample(kNetwork), {
                                             {"Network Receive/lo", rate(1000)},
                                             {"Network Transmit/lo", rate(1000)},
                                             {"Network Receive/eth0", rate(2000)},
                                             {"Network Transmit/eth0", rate(400)},
                                             {"Network Receive/eth1", rate(200)},
                                             {"Network Transmit/eth1", rate(100)},
                                             {"Network Transmit/wlan0", rate(20)},
                                         });
}

TEST_F(HostSourceFakeProc, MissingFileIsReportedOnceAndRetriedLater) {
  const std::string diskstats = path("diskstats");
  write_snapshot(0, {diskstats});
  HostSource host = source(kAll);
  std::vector<Reading> readings;
  const std::string message = host.sample(kT0, readings);
  EXPECT_NE(message.find(diskstats), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  EXPECT_EQ(values_of(readings).count("Memory Used/host"), 1u) << "the other groups are still read";

  write_snapshot(1, {diskstats});
  Values values = sample(host, kT0 + kInterval);  // not retried yet, not reported again
  EXPECT_EQ(values.count("CPU Usage/cpu0"), 1u);
  EXPECT_EQ(values.count("Network Receive/lo"), 1u);

  // Retried once its interval (5 s) has passed: its first reading gives no rate, the next does.
  write_file(diskstats, kDiskstats[0]);
  const int64_t later = kT0 + 6'000'000'000;
  values = sample(host, later);
  EXPECT_EQ(values.count("Disk Read/sda"), 0u);
  write_file(diskstats, kDiskstats[1]);
  values = sample(host, later + kInterval);
  EXPECT_DOUBLE_EQ(values.at("Disk Read/sda"), 100 * 512 / kSeconds);
}

TEST_F(HostSourceFakeProc, ReadsOnlyTheGroupsAskedFor) {
  write_file(path("stat"), kStat[0]);  // nothing else exists: reading it would be reported
  write_file(process_path("stat"), kProcessStat[0]);
  HostSource host = source(kCpu);
  EXPECT_EQ(host.name(), "host cpu");
  EXPECT_TRUE(sample(host, kT0).empty());
  write_file(path("stat"), kStat[1]);
  write_file(process_path("stat"), kProcessStat[1]);
  EXPECT_EQ(sample(host, kT0 + kInterval).size(), 4u);
}

// Sends `bytes` bytes to itself over UDP on 127.0.0.1.
void send_over_loopback(size_t bytes) {
  const int socket_fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(socket_fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(socket_fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(getsockname(socket_fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::vector<char> payload(1000, 'x');
  for (size_t sent = 0; sent < bytes; sent += payload.size()) {
    sendto(socket_fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&address), length);
  }
  close(socket_fd);
}

TEST(HostSourceRealProc, ReadsThisMachine) {
  HostSource host(kAll);
  std::vector<Reading> readings;
  ASSERT_EQ(host.sample(now_ns(), readings), "");
  send_over_loopback(20'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  readings.clear();
  ASSERT_EQ(host.sample(now_ns(), readings), "");

  const Values values = values_of(readings);
  for (const auto& [key, value] : values) {
    if (key.rfind("CPU Usage/", 0) == 0) {
      EXPECT_GE(value, 0) << key;
      EXPECT_LE(value, 100) << key;
    }
  }
  EXPECT_EQ(values.count("CPU Usage/all"), 1u);
  EXPECT_GT(values.at("Memory Used/host"), 0);
  EXPECT_GT(values.at("Process RSS/process"), 0);
  ASSERT_EQ(values.count("Network Receive/lo"), 1u);
  EXPECT_GT(values.at("Network Receive/lo"), 0) << "20 kB were sent over loopback";
}

int64_t process_cpu_ns() {
  timespec cpu{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  return int64_t{cpu.tv_sec} * 1'000'000'000 + cpu.tv_nsec;
}

// This process's usage comes from its CPU clock, to the nanosecond, not from /proc's 10 ms ticks:
// a spin of 3.7 ms of CPU reads as that, not as 0% or one tick.
TEST(HostSourceRealProc, ThisProcessesUsageIsExact) {
  HostSource host(HostGroups{true, false, false, false});
  std::vector<Reading> readings;
  const int64_t cpu_before_first = process_cpu_ns();
  const int64_t t0 = now_ns();
  ASSERT_EQ(host.sample(t0, readings), "");
  const int64_t cpu_after_first = process_cpu_ns();
  while (process_cpu_ns() - cpu_after_first < 3'700'000) {
  }
  const int64_t t1 = now_ns();
  readings.clear();
  ASSERT_EQ(host.sample(t1, readings), "");
  const int64_t cpu_after_second = process_cpu_ns();
  const double usage = values_of(readings).at("Process CPU Usage/process");
  // The source read the clock inside each sample: between the reads around them.
  const double elapsed = static_cast<double>(t1 - t0);
  EXPECT_GE(usage, 100.0 * 3'700'000 / elapsed);
  EXPECT_LE(usage, 100.0 * static_cast<double>(cpu_after_second - cpu_before_first) / elapsed);
}

// The rate divides the CPU time between the clock's reads by the wall time between those reads,
// not by the time the rounds were given: a round whose time was read long before its CPU clock
// (the sampler thread lost its CPU in between) must not read more than the CPU the process had.
TEST(HostSourceRealProc, ThisProcessesUsageIsOverTheClocksOwnInterval) {
  HostSource host(HostGroups{true, false, false, false});
  std::vector<Reading> readings;
  ASSERT_EQ(host.sample(now_ns(), readings), "");
  const int64_t cpu_before = process_cpu_ns();
  while (process_cpu_ns() - cpu_before < 5'000'000) {
  }
  readings.clear();
  ASSERT_EQ(host.sample(now_ns() - 4'000'000, readings), "");  // the round's time, 4 ms stale
  const double usage = values_of(readings).at("Process CPU Usage/process");
  // One thread spun: at most one CPU's worth (the round's time would have made it about 500%).
  EXPECT_LE(usage, 101.0);
  EXPECT_GT(usage, 0.0);
}

// CPU time the clock added late shows in the next interval instead of as more CPUs than there are.
TEST(CpuShare, CapsAtTheCpusAndCarriesTheRest) {
  CpuShare share(2.0);
  EXPECT_DOUBLE_EQ(share.over(1'500'000, 1'000'000), 1.5);
  EXPECT_DOUBLE_EQ(share.over(4'600'000, 1'000'000), 2.0);  // 4.6 CPUs' worth: 2.6 ms carried
  EXPECT_DOUBLE_EQ(share.over(0, 1'000'000), 2.0);          // 2 ms of it
  EXPECT_DOUBLE_EQ(share.over(0, 1'000'000), 0.6);          // the rest: 1.5 + 2 + 2 + 0.6 = 6.1 ms in all
  EXPECT_DOUBLE_EQ(share.over(0, 1'000'000), 0.0);
  EXPECT_DOUBLE_EQ(share.over(5'000'000, 1'000'000), 2.0);
  share.reset();  // a sample without a reading: nothing carried past it
  EXPECT_DOUBLE_EQ(share.over(500'000, 1'000'000), 0.5);
}

}  // namespace
}  // namespace perfprof
