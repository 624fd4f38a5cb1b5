#include "telemetry/host_source.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <exception>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "common/clock.h"

namespace perfprof {
namespace {

// A file that cannot be opened or read (a kernel without it, an exited process, a fake tree
// without it) is tried again after this long rather than at every sample: it is reported once,
// when it starts failing, and its group's other files are still read meanwhile.
constexpr int64_t kRetryIntervalNs = 5'000'000'000;
constexpr size_t kInitialBufferSize = 4096;
constexpr double kNsPerSecond = 1e9;
constexpr uint64_t kSectorBytes = 512;  // diskstats counts 512-byte sectors whatever the device's
constexpr uint64_t kBytesPerKb = 1024;  // meminfo's "kB"
constexpr size_t kMaxCpus = 1 << 16;    // a larger cpuN is a malformed line, not a core

// Why an errno failed, thread-safe (std::strerror is not).
std::string errno_text(int error) { return std::system_category().message(error); }

void add_error(std::string& errors, const std::string& message) {
  if (!errors.empty()) errors += "; ";
  errors += message;
}

// One file under the proc root, kept open and read whole at each sample with pread at offset 0
// into a buffer that only grows (to the largest size the file had). /proc files are regenerated
// at each read, so one descriptor serves the whole run; a fake tree in a test must therefore
// rewrite its files in place (truncate and write the same inode, as test::write_file does), and a
// file replaced by rename is not seen until the descriptor is dropped by a failing read.
class ProcFile {
 public:
  explicit ProcFile(std::string path) : path_(std::move(path)) {}
  ~ProcFile() { close_descriptor(); }
  ProcFile(const ProcFile&) = delete;
  ProcFile& operator=(const ProcFile&) = delete;

  // The file's whole text (valid until the next read), or nullopt when it cannot be read now;
  // `errors` gets why when this is the first failure in a row.
  std::optional<std::string_view> read(int64_t now_ns, std::string& errors) {
    if (descriptor_ < 0) {
      if (failing_ && now_ns < retry_at_ns_) return std::nullopt;
      descriptor_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (descriptor_ < 0) return fail(errno, now_ns, errors);
    }
    if (buffer_.empty()) buffer_.resize(kInitialBufferSize);
    // A /proc read may stop short of the end (a seq_file hands over one page of records at a
    // time), so only a read returning 0 ends the file.
    size_t size = 0;
    for (;;) {
      if (size == buffer_.size()) buffer_.resize(buffer_.size() * 2);
      const ssize_t count = ::pread(descriptor_, buffer_.data() + size, buffer_.size() - size,
                                    static_cast<off_t>(size));
      if (count == 0) break;
      if (count > 0) {
        size += static_cast<size_t>(count);
      } else if (errno != EINTR) {
        return fail(errno, now_ns, errors);
      }
    }
    failing_ = false;
    return std::string_view(buffer_.data(), size);
  }

 private:
  std::nullopt_t fail(int error, int64_t now_ns, std::string& errors) {
    close_descriptor();
    if (!failing_) add_error(errors, fmt::format("cannot read {}: {}", path_, errno_text(error)));
    failing_ = true;
    retry_at_ns_ = now_ns + kRetryIntervalNs;
    return std::nullopt;
  }

  void close_descriptor() noexcept {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = -1;
  }

  const std::string path_;
  int descriptor_ = -1;
  std::string buffer_;
  bool failing_ = false;
  int64_t retry_at_ns_ = 0;
};

// The line at the front of `text`, removed from it (without its '\n').
std::string_view next_line(std::string_view& text) noexcept {
  const size_t end = text.find('\n');
  const std::string_view line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return line;
}

bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// The blank-separated token at the front of `text`, removed from it; empty at the end.
std::string_view next_token(std::string_view& text) noexcept {
  size_t begin = 0;
  while (begin < text.size() && is_blank(text[begin])) ++begin;
  size_t end = begin;
  while (end < text.size() && !is_blank(text[end])) ++end;
  const std::string_view token = text.substr(begin, end - begin);
  text.remove_prefix(end);
  return token;
}

// `token` as a whole unsigned number.
bool parse_number(std::string_view token, uint64_t& value) noexcept {
  const char* end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(token.data(), end, value);
  return error == std::errc() && stop == end && !token.empty();
}

// Reads `count` numbers at the front of `text` into `values`; false when fewer are there or one
// is not a number (a malformed line).
bool read_numbers(std::string_view& text, uint64_t* values, size_t count) noexcept {
  for (size_t i = 0; i < count; ++i) {
    if (!parse_number(next_token(text), values[i])) return false;
  }
  return true;
}

bool starts_with(std::string_view text, std::string_view prefix) noexcept {
  return text.substr(0, prefix.size()) == prefix;
}

// What each group's reader gets at a sample.
struct Tick {
  int64_t now_ns = 0;
  uint64_t number = 0;    // 1 at the first sample
  double elapsed_s = 0;   // since the previous sample; 0 at the first
};

// A monotonic kernel counter of one instance, for its rate: its value at the last sample that
// read it.
class Counter {
 public:
  // Takes this sample's value; returns its increase when it was also read at the previous sample
  // (a new instance starts its rate at its second sighting) and did not go backwards (a device
  // reset, a 32-bit counter wrapping).
  std::optional<uint64_t> advance(uint64_t value, const Tick& tick) noexcept {
    const bool consecutive = seen_ != 0 && seen_ + 1 == tick.number;
    const bool forward = value >= value_;
    const uint64_t increase = value - value_;
    value_ = value;
    seen_ = tick.number;
    if (!consecutive || !forward) return std::nullopt;
    return increase;
  }

  // The increase per second since the previous sample, under advance()'s conditions.
  std::optional<double> rate(uint64_t value, const Tick& tick) noexcept {
    const std::optional<uint64_t> increase = advance(value, tick);
    if (!increase || tick.elapsed_s <= 0) return std::nullopt;
    return static_cast<double>(*increase) / tick.elapsed_s;
  }

 private:
  uint64_t value_ = 0;
  uint64_t seen_ = 0;  // the sample number that read value_; 0: never read
};

void add_reading(std::vector<Reading>& out, CounterMetric metric, StringId instance, double value) {
  out.push_back(Reading{metric, instance, value});
}

void add_rate(std::vector<Reading>& out, CounterMetric metric, StringId instance,
              std::optional<double> rate, double scale = 1) {
  if (rate) add_reading(out, metric, instance, *rate * scale);
}

}  // namespace

double CpuShare::over(double cpu_ns, double wall_ns) noexcept {
  if (wall_ns <= 0) return 0;
  const double used = cpu_ns + carried_ns_;
  const double shown = std::min(used, wall_ns * cpus_);
  carried_ns_ = used - shown;
  return shown / wall_ns;
}

class HostSource::GroupReader {
 public:
  virtual ~GroupReader() = default;
  // Appends the group's readings at `tick` to `out`, and to `errors` why a file could not be read.
  virtual void read(const Tick& tick, std::vector<Reading>& out, std::string& errors) = 0;
};

namespace {

// HostCpuUsage from <root>/stat and ProcessCpuUsage from <root>/<pid>/stat, or, for this
// process in the real /proc, from its CPU clock.
class CpuReader : public HostSource::GroupReader {
 public:
  CpuReader(const std::string& root, pid_t pid)
      : stat_(root + "/stat"),
        process_stat_(fmt::format("{}/{}/stat", root, pid)),
        own_clock_(root == "/proc" && pid == getpid()),
        ticks_per_second_(static_cast<double>(sysconf(_SC_CLK_TCK))),
        process_(global_strings().intern("process")) {
    all_.instance = global_strings().intern("all");
  }

  void read(const Tick& tick, std::vector<Reading>& out, std::string& errors) override {
    if (const auto text = stat_.read(tick.now_ns, errors)) read_cores(*text, tick, out);
    if (own_clock_) {
      read_own_clock(tick, out);
    } else if (const auto text = process_stat_.read(tick.now_ns, errors)) {
      read_process(*text, tick, out);
    }
  }

 private:
  // One "cpu" line's ticks, split into busy and idle time.
  struct Core {
    StringId instance = kEmptyString;
    Counter busy;
    Counter idle;
  };

  // Lines "cpu user nice system idle iowait irq softirq steal guest guest_nice" (the aggregate)
  // and "cpuN ..." (core N); kernels before 2.6.33 give fewer than ten fields. Idle time is idle
  // + iowait; guest and guest_nice are left out, the kernel counts them in user and nice already.
  void read_cores(std::string_view text, const Tick& tick, std::vector<Reading>& out) {
    while (!text.empty()) {
      std::string_view fields = next_line(text);
      const std::string_view name = next_token(fields);
      uint64_t ticks[8] = {};  // up to steal; missing ones are 0
      if (!starts_with(name, "cpu") || !read_ticks(fields, ticks)) continue;
      Core* core = core_named(name);
      if (core == nullptr) continue;
      const uint64_t idle = ticks[3] + ticks[4];
      const uint64_t busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7];
      const std::optional<uint64_t> busy_increase = core->busy.advance(busy, tick);
      const std::optional<uint64_t> idle_increase = core->idle.advance(idle, tick);
      if (!busy_increase || !idle_increase) continue;
      const uint64_t total = *busy_increase + *idle_increase;
      if (total == 0) continue;  // no tick elapsed: no measure, rather than a 0%
      add_reading(out, CounterMetric::HostCpuUsage, core->instance,
                  100.0 * static_cast<double>(*busy_increase) / static_cast<double>(total));
    }
  }

  // The first 8 of a cpu line's numbers; false unless every field is a number and there are at
  // least 4 (user nice system idle).
  static bool read_ticks(std::string_view fields, uint64_t (&ticks)[8]) noexcept {
    size_t count = 0;
    for (std::string_view token = next_token(fields); !token.empty(); token = next_token(fields)) {
      uint64_t value = 0;
      if (!parse_number(token, value)) return false;
      if (count < 8) ticks[count] = value;
      ++count;
    }
    return count >= 4;
  }

  // The state of "cpu" (all) or "cpuN" (interned when first seen); nullptr for another name.
  Core* core_named(std::string_view name) {
    if (name == "cpu") return &all_;
    size_t index = 0;
    const std::string_view digits = name.substr(3);
    const char* end = digits.data() + digits.size();
    const auto [stop, error] = std::from_chars(digits.data(), end, index);
    if (error != std::errc() || stop != end || digits.empty() || index >= kMaxCpus) return nullptr;
    if (index >= cores_.size()) cores_.resize(index + 1);
    Core& core = cores_[index];
    if (core.instance == kEmptyString) core.instance = global_strings().intern(name);
    return &core;
  }

  // "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
  // stime ...": utime and stime are fields 14 and 15, counted after the comm, which may hold
  // blanks and parentheses, so the fields start after the last ')'. tty_nr and tpgid may be
  // negative: the fields before utime are skipped, not parsed.
  void read_process(std::string_view text, const Tick& tick, std::vector<Reading>& out) {
    const size_t comm_end = text.rfind(')');
    if (comm_end == std::string_view::npos) return;
    std::string_view fields = text.substr(comm_end + 1);
    for (int field = 3; field < 14; ++field) {
      if (next_token(fields).empty()) return;
    }
    uint64_t times[2];  // utime stime
    if (!read_numbers(fields, times, 2)) return;
    const std::optional<double> ticks_per_s = process_ticks_.rate(times[0] + times[1], tick);
    add_rate(out, CounterMetric::ProcessCpuUsage, process_, ticks_per_s, 100.0 / ticks_per_second_);
  }

  // /proc/<pid>/stat counts CPU time in clock ticks (USER_HZ, 100 a second): over a 20 ms sample
  // a process's usage could only read as 0, 50, 100... %. The process's own CPU clock counts
  // nanoseconds, and is divided by the wall time between its own reads, each taken beside it:
  // the round's time is read before its other files, and a sampler thread that loses its CPU in
  // between would put CPU time of one interval over the wall time of another.
  //
  // The clock adds a thread running on another CPU only at that CPU's scheduler tick (1 to 10
  // ms) or when it is switched out, so over a short interval it can hold CPU time of the one
  // before: more than the process's CPUs could give (4.6 CPUs' worth on a 2-CPU machine at 1
  // ms). CpuShare caps a reading at the CPUs the process may run on and carries the rest.
  void read_own_clock(const Tick& tick, std::vector<Reading>& out) {
    timespec cpu{};
    const int64_t wall_ns = now_ns();
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) != 0) return;
    const uint64_t cpu_ns = static_cast<uint64_t>(cpu.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(cpu.tv_nsec);
    const int64_t previous_wall_ns = std::exchange(own_clock_read_ns_, wall_ns);
    const std::optional<uint64_t> increase = process_ticks_.advance(cpu_ns, tick);
    if (!increase || wall_ns <= previous_wall_ns) {
      own_share_.reset();
      return;
    }
    const double share = own_share_.over(static_cast<double>(*increase), static_cast<double>(wall_ns - previous_wall_ns));
    add_reading(out, CounterMetric::ProcessCpuUsage, process_, 100.0 * share);
  }

  // The CPUs this process may run on (its affinity), at least 1.
  static double usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int count = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
    return count > 0 ? count : std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  }

  ProcFile stat_;
  ProcFile process_stat_;
  const bool own_clock_;  // this process in the real /proc: its CPU clock, not the stat file
  const double ticks_per_second_;
  const StringId process_;
  Core all_;
  std::vector<Core> cores_;  // by core number
  Counter process_ticks_;  // in clock ticks, or in ns from the own clock
  int64_t own_clock_read_ns_ = 0;  // when the own clock was last read (now_ns); 0: never
  CpuShare own_share_{usable_cpus()};
};

// HostMemoryUsed/Available from <root>/meminfo and ProcessMemoryRss from <root>/<pid>/statm:
// levels, read at every sample including the first.
class MemoryReader : public HostSource::GroupReader {
 public:
  MemoryReader(const std::string& root, pid_t pid)
      : meminfo_(root + "/meminfo"),
        statm_(fmt::format("{}/{}/statm", root, pid)),
        page_bytes_(static_cast<double>(sysconf(_SC_PAGESIZE))),
        host_(global_strings().intern("host")),
        process_(global_strings().intern("process")) {}

  void read(const Tick& tick, std::vector<Reading>& out, std::string& errors) override {
    if (const auto text = meminfo_.read(tick.now_ns, errors)) read_host(*text, out);
    if (const auto text = statm_.read(tick.now_ns, errors)) read_process(*text, out);
  }

 private:
  // "MemTotal:  16318480 kB" lines; the two wanted come first, so the scan stops there.
  void read_host(std::string_view text, std::vector<Reading>& out) {
    std::optional<uint64_t> total;
    std::optional<uint64_t> available;
    while (!text.empty() && !(total && available)) {
      std::string_view line = next_line(text);
      const std::string_view key = next_token(line);
      uint64_t kb = 0;
      if (!parse_number(next_token(line), kb)) continue;
      if (key == "MemTotal:") total = kb * kBytesPerKb;
      if (key == "MemAvailable:") available = kb * kBytesPerKb;
    }
    if (total && available && *total >= *available) {
      add_reading(out, CounterMetric::HostMemoryUsed, host_, static_cast<double>(*total - *available));
    }
    if (available) {
      add_reading(out, CounterMetric::HostMemoryAvailable, host_, static_cast<double>(*available));
    }
  }

  // "size resident shared text lib data dt", in pages.
  void read_process(std::string_view text, std::vector<Reading>& out) {
    uint64_t pages[2];
    if (!read_numbers(text, pages, 2)) return;
    add_reading(out, CounterMetric::ProcessMemoryRss, process_, static_cast<double>(pages[1]) * page_bytes_);
  }

  ProcFile meminfo_;
  ProcFile statm_;
  const double page_bytes_;
  const StringId host_;
  const StringId process_;
};

// A block device or network interface, by name.
struct Device {
  StringId instance = kEmptyString;  // kEmptyString: left out (a partition, a virtual disk)
  Counter incoming;                  // sectors read, bytes received
  Counter outgoing;                  // sectors written, bytes sent
};

// Map with lookup by string_view (std::less<>), so a known name costs no allocation.
using Devices = std::map<std::string, Device, std::less<>>;

// DiskRead/DiskWrite per block device from <root>/diskstats lines "major minor name reads
// merged sectors_read ms writes merged sectors_written ...". Whole disks only: loop*, ram* and
// zram* are left out (memory or files, not disks), and so are partitions, whose traffic their
// disk counts already. A partition is a name that is another listed device's name followed by
// digits (sda1 of sda) or by 'p' and digits (nvme0n1p1 of nvme0n1, mmcblk0p1 of mmcblk0); a disk
// whose own name ends in digits (nvme0n1, md127, dm-0) has no such parent listed. A name is
// classified once, when first seen: its disk is listed beside it from then on.
class DiskReader : public HostSource::GroupReader {
 public:
  explicit DiskReader(const std::string& root) : diskstats_(root + "/diskstats") {}

  void read(const Tick& tick, std::vector<Reading>& out, std::string& errors) override {
    const auto text = diskstats_.read(tick.now_ns, errors);
    if (!text) return;
    parse(*text);
    for (const Line& line : lines_) {
      Device& device = device_named(line.name);
      if (device.instance == kEmptyString) continue;
      const std::optional<double> read = device.incoming.rate(line.sectors_read, tick);
      const std::optional<double> written = device.outgoing.rate(line.sectors_written, tick);
      add_rate(out, CounterMetric::DiskRead, device.instance, read, kSectorBytes);
      add_rate(out, CounterMetric::DiskWrite, device.instance, written, kSectorBytes);
    }
  }

 private:
  struct Line {
    std::string_view name;
    uint64_t sectors_read = 0;
    uint64_t sectors_written = 0;
  };

  // Every well-formed line into lines_ (kept between samples, so its capacity is reused).
  void parse(std::string_view text) {
    lines_.clear();
    while (!text.empty()) {
      std::string_view fields = next_line(text);
      // major minor, then after the name: reads merged sectors_read ms writes merged sectors_written
      uint64_t numbers[7];
      if (!read_numbers(fields, numbers, 2)) continue;
      const std::string_view name = next_token(fields);
      if (name.empty() || !read_numbers(fields, numbers, 7)) continue;
      lines_.push_back(Line{name, numbers[2], numbers[6]});
    }
  }

  Device& device_named(std::string_view name) {
    const auto found = devices_.find(name);
    if (found != devices_.end()) return found->second;
    Device& device = devices_.emplace(std::string(name), Device{}).first->second;
    if (is_whole_disk(name)) device.instance = global_strings().intern(name);
    return device;
  }

  bool is_whole_disk(std::string_view name) const {
    if (starts_with(name, "loop") || starts_with(name, "ram") || starts_with(name, "zram")) return false;
    std::string_view base = name;
    while (!base.empty() && base.back() >= '0' && base.back() <= '9') base.remove_suffix(1);
    if (base.size() == name.size()) return true;  // no trailing digits
    if (is_listed(base)) return false;
    return !(base.size() > 1 && base.back() == 'p' && is_listed(base.substr(0, base.size() - 1)));
  }

  bool is_listed(std::string_view name) const {
    for (const Line& line : lines_) {
      if (line.name == name) return true;
    }
    return false;
  }

  ProcFile diskstats_;
  std::vector<Line> lines_;  // this sample's, pointing into diskstats_'s buffer
  Devices devices_;
};

// NetworkReceive/NetworkTransmit per interface, "lo" included, from "name: rx_bytes rx_packets
// ... (8 receive fields) tx_bytes ..." lines. Read from <root>/<pid>/net/dev rather than
// <root>/net/dev: /proc/net is the reading thread's network namespace, <pid>/net the profiled
// process's, which is the traffic asked about (the same namespace when pid is this process).
class NetworkReader : public HostSource::GroupReader {
 public:
  NetworkReader(const std::string& root, pid_t pid) : dev_(fmt::format("{}/{}/net/dev", root, pid)) {}

  void read(const Tick& tick, std::vector<Reading>& out, std::string& errors) override {
    const auto text = dev_.read(tick.now_ns, errors);
    if (!text) return;
    std::string_view rest = *text;
    while (!rest.empty()) {
      std::string_view line = next_line(rest);
      const size_t colon = line.find(':');  // interface names cannot hold ':'; the headers have none
      if (colon == std::string_view::npos) continue;
      std::string_view name = line.substr(0, colon);
      name = next_token(name);
      std::string_view fields = line.substr(colon + 1);
      uint64_t numbers[9];  // 8 receive fields, then tx bytes
      if (name.empty() || !read_numbers(fields, numbers, 9)) continue;
      Device& interface = interface_named(name);
      const std::optional<double> received = interface.incoming.rate(numbers[0], tick);
      const std::optional<double> sent = interface.outgoing.rate(numbers[8], tick);
      add_rate(out, CounterMetric::NetworkReceive, interface.instance, received);
      add_rate(out, CounterMetric::NetworkTransmit, interface.instance, sent);
    }
  }

 private:
  Device& interface_named(std::string_view name) {
    const auto found = interfaces_.find(name);
    if (found != interfaces_.end()) return found->second;
    Device& interface = interfaces_.emplace(std::string(name), Device{}).first->second;
    interface.instance = global_strings().intern(name);
    return interface;
  }

  ProcFile dev_;
  Devices interfaces_;
};

}  // namespace

HostSource::HostSource(HostGroups groups, std::string proc_root, pid_t pid) : groups_(groups) {
  if (groups.cpu) readers_.push_back(std::make_unique<CpuReader>(proc_root, pid));
  if (groups.mem) readers_.push_back(std::make_unique<MemoryReader>(proc_root, pid));
  if (groups.disk) readers_.push_back(std::make_unique<DiskReader>(proc_root));
  if (groups.network) readers_.push_back(std::make_unique<NetworkReader>(proc_root, pid));
}

HostSource::~HostSource() = default;

std::string HostSource::name() const {
  std::string text = "host";
  if (groups_.cpu) text += " cpu";
  if (groups_.mem) text += " mem";
  if (groups_.disk) text += " disk";
  if (groups_.network) text += " network";
  return text;
}

std::string HostSource::sample(int64_t now_ns, std::vector<Reading>& out) noexcept {
  Tick tick;
  tick.now_ns = now_ns;
  tick.number = ++samples_;
  tick.elapsed_s = samples_ > 1 ? static_cast<double>(now_ns - previous_ns_) / kNsPerSecond : 0;
  previous_ns_ = now_ns;
  std::string errors;
  try {
    for (const auto& reader : readers_) reader->read(tick, out, errors);
  } catch (const std::bad_alloc&) {
    return "out of memory";  // short enough for the string's own storage: no allocation
  } catch (const std::exception& error) {  // a mutex that cannot lock (interning)
    return error.what();
  }
  return errors;
}

}  // namespace perfprof
