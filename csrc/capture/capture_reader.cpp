#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "capture/byte_codec.h"
#include "capture/capture_checks.h"
#include "capture/capture_fields.h"
#include "capture/checksum.h"
#include "capture/capture_file.h"
#include "capture/capture_format.h"

namespace perfprof {
namespace {

using capture_format::ChunkKind;

// A HostEvents payload begins with the thread's buffer index (u32) and the record count (u64).
constexpr uint64_t kHostEventsPrefixBytes = 12;

// The file header (`bytes`: the first bytes of `total` ones); returns where the first chunk begins.
uint64_t read_file_header(std::string_view bytes, uint64_t total) {
  if (bytes.size() < capture_format::kFileHeaderBytes ||
      std::memcmp(bytes.data(), capture_format::kMagic, sizeof(capture_format::kMagic)) != 0) {
    throw CaptureFormatError("not a perfprof capture");
  }
  ByteReader in(bytes.substr(sizeof(capture_format::kMagic)));
  uint16_t major = 0;
  uint16_t minor = 0;
  uint32_t header_bytes = 0;
  in(major);
  in(minor);
  in(header_bytes);
  if (major != capture_format::kVersionMajor) {
    throw CaptureFormatError(fmt::format("capture format {}.{}: this perfprof reads {}.x", major, minor,
                                         capture_format::kVersionMajor));
  }
  if (header_bytes < capture_format::kFileHeaderBytes || header_bytes > total) {
    throw CaptureFormatError("the capture's header is cut short");
  }
  return header_bytes;
}

// Decodes chunks into a capture. Each chunk is decoded whole before it changes the capture, so
// a chunk that does not decode leaves no half of itself behind.
class CaptureAssembler {
 public:
  void add(ChunkKind kind, std::string_view payload) {
    ByteReader in(payload);
    switch (kind) {
      case ChunkKind::Process: capture_.process = decoded<ProcessInfo>(in); break;
      case ChunkKind::Window: capture_.window = decoded<CollectionWindow>(in); has_window_ = true; break;
      case ChunkKind::Strings: add_entries(capture_.strings, in, capture_checks::kStringIdCeiling, "string"); break;
      case ChunkKind::ArgSets:
        add_entries(capture_.arg_sets, in, capture_checks::kArgSetIdCeiling, "argument set");
        break;
      case ChunkKind::Thread: add_thread(in); break;
      case ChunkKind::HostEvents: throw std::logic_error("HostEvents chunks are added by add_host_events");
      case ChunkKind::CompletedRanges: append(capture_.host.completed, in); break;
      case ChunkKind::MemoryEvents: add_memory(in); break;
      case ChunkKind::ObservedTensors: append(capture_.host.observed_tensors, in); break;
      case ChunkKind::Losses: add_losses(in); break;
      case ChunkKind::OtherThreads: append(capture_.other_threads, in); break;
      case ChunkKind::Metadata: append(capture_.metadata, in); break;
      case ChunkKind::GpuActivities: append(capture_.gpu.collected.activities, in); break;
      case ChunkKind::ApiCalls: append(capture_.gpu.collected.api_calls, in); break;
      case ChunkKind::ExternalIds: add_external_ids(in); break;
      case ChunkKind::GpuDevices: append(capture_.gpu.collected.devices, in); break;
      case ChunkKind::StreamAnnotations: append(capture_.gpu.stream_annotations, in); break;
      case ChunkKind::GpuStatus: add_gpu_status(in); break;
      case ChunkKind::KernelMetrics: add_kernel_metrics(in); break;
      case ChunkKind::End: break;
      default: return;  // a kind a newer minor version added: skipped
    }
    if (in.remaining() != 0) throw CaptureFormatError("the chunk has bytes after its fields");
  }

  // The records of a HostEvents chunk of thread `index`, checked: they stay in `bytes`.
  void add_stored_run(uint32_t index, const StoredRun& run, const EventKindCounts& kinds, int64_t first_ns,
                      int64_t last_ns) {
    thread_of(index);
    StoredEvents& stored = capture_.stored;
    stored.runs[index].push_back(run);
    stored.count += run.count;
    for (size_t kind = 0; kind < kinds.size(); ++kind) stored.kinds[kind] += kinds[kind];
    stored_first_ns_ = std::min(stored_first_ns_, first_ns);
    stored_last_ns_ = std::max(stored_last_ns_, last_ns);
  }

  // The ids the records of the chunks read so far may use.
  capture_checks::KnownIds known_ids() const {
    return {capture_.strings, std::max<size_t>(capture_.arg_sets.size(), 1)};
  }

  Capture finish(std::shared_ptr<const EventBytes> bytes) {
    if (capture_.strings.empty()) capture_.strings.emplace_back();
    if (capture_.arg_sets.empty()) capture_.arg_sets.emplace_back();
    if (!has_window_) capture_.window = span_of_events();
    capture_.stored.bytes = std::move(bytes);
    return std::move(capture_);
  }

 private:
  template <typename T>
  T decoded(ByteReader& in) const {
    T value;
    in(value);
    capture_checks::check(value, known_ids());
    return value;
  }

  template <typename T>
  void append(std::vector<T>& to, ByteReader& in) {
    std::vector<T> items;
    in(items);
    capture_checks::check_each(items, known_ids());
    to.insert(to.end(), std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
  }

  // (id, entry) pairs of an interned table (strings, argument sets); id 0 is the empty entry.
  template <typename T>
  void add_entries(std::vector<T>& table, ByteReader& in, uint32_t id_ceiling, const char* what) {
    uint64_t count = 0;
    in(count);
    const capture_checks::KnownIds known = known_ids();
    std::vector<std::pair<uint32_t, T>> entries;
    for (uint64_t i = 0; i < count; ++i) {  // each entry takes bytes of the chunk: `in` ends the loop
      uint32_t id = 0;
      T entry;
      in(id);
      in(entry);
      capture_checks::check_entry_id(id, id_ceiling, what);
      capture_checks::check(entry, known);
      entries.emplace_back(id, std::move(entry));
    }
    for (auto& [id, entry] : entries) {
      if (id >= table.size()) table.resize(size_t{id} + 1);
      table[id] = std::move(entry);
    }
  }

  void add_thread(ByteReader& in) {
    uint32_t index = 0;
    int64_t os_tid = 0;
    std::string name;
    in(index);
    in(os_tid);
    in(name);
    ThreadEvents& thread = thread_of(index);
    thread.os_tid = os_tid;
    thread.name = std::move(name);
  }

  void add_memory(ByteReader& in) {
    memory::MemoryEvents events;
    in(events);
    capture_checks::check(events, known_ids());
    memory::append_events(capture_.host.memory, std::move(events));
  }

  void add_losses(ByteReader& in) {
    uint64_t dropped = 0;
    ImportLosses losses;
    in(dropped);
    in(losses.events);
    in(losses.failed_reads);
    capture_.host.dropped_events += dropped;
    capture_.host.import_losses.events += losses.events;
    capture_.host.import_losses.failed_reads += losses.failed_reads;
  }

  void add_external_ids(ByteReader& in) {
    uint64_t count = 0;
    in(count);
    constexpr size_t kPairBytes = sizeof(uint32_t) + sizeof(uint64_t);
    if (count > in.remaining() / kPairBytes) {
      throw CaptureFormatError(fmt::format("a list of {} external ids is longer than the {} bytes left in its chunk",
                                           count, in.remaining()));
    }
    std::vector<std::pair<uint32_t, uint64_t>> ids(count);
    for (auto& [correlation, range_id] : ids) {
      in(correlation);
      in(range_id);
    }
    capture_.gpu.collected.external_ids.insert(ids.begin(), ids.end());
  }

  void add_gpu_status(ByteReader& in) {
    bool collected = false;
    uint64_t dropped = 0;
    in(collected);
    in(dropped);
    capture_.gpu.collected_any |= collected;
    capture_.gpu.collected.dropped_records += dropped;
  }

  void add_kernel_metrics(ByteReader& in) {
    auto metrics = decoded<KernelMetricsInput>(in);
    for (const KernelMetricRow& kernel : metrics.kernels) {
      if (kernel.values.size() != metrics.columns.size()) {
        throw CaptureFormatError("a kernel's metric values do not match the metric columns");
      }
    }
    KernelMetricsInput& into = capture_.gpu.kernel_metrics;
    if (!into.columns.empty() && into.columns != metrics.columns) {
      throw CaptureFormatError("two KernelMetrics chunks name different metric columns");
    }
    into.columns = std::move(metrics.columns);
    into.kernels_left_out += metrics.kernels_left_out;
    into.kernels_unmatched += metrics.kernels_unmatched;
    into.kernels.insert(into.kernels.end(), std::make_move_iterator(metrics.kernels.begin()),
                        std::make_move_iterator(metrics.kernels.end()));
  }

  ThreadEvents& thread_of(uint32_t index) {
    const auto [it, added] = thread_rows_.emplace(index, capture_.host.threads.size());
    if (added) capture_.host.threads.push_back(ThreadEvents{index, 0, {}, {}});
    return capture_.host.threads[it->second];
  }

  // A capture cut before its window was written keeps every event it holds.
  CollectionWindow span_of_events() const {
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    const auto note = [&](int64_t begin_ns, int64_t end_ns) {
      first = std::min(first, begin_ns);
      last = std::max(last, end_ns);
    };
    if (!capture_.stored.empty()) note(stored_first_ns_, stored_last_ns_);
    for (const CompletedRange& range : capture_.host.completed) note(range.begin_ns, range.end_ns);
    for (const memory::Allocation& allocation : capture_.host.memory.allocations) {
      note(allocation.time_ns, allocation.time_ns);
    }
    for (const GpuActivity& activity : capture_.gpu.collected.activities) note(activity.start_ns, activity.end_ns);
    for (const ApiCall& call : capture_.gpu.collected.api_calls) note(call.start_ns, call.end_ns);
    return first <= last ? CollectionWindow{first, last} : CollectionWindow{};
  }

  Capture capture_;
  bool has_window_ = false;
  int64_t stored_first_ns_ = std::numeric_limits<int64_t>::max();  // earliest and latest stored event
  int64_t stored_last_ns_ = std::numeric_limits<int64_t>::min();
  std::unordered_map<uint32_t, size_t> thread_rows_;  // buffer index -> row in capture_.host.threads
};

// A copy of a capture's bytes: its stored events point into it.
class MemoryBytes final : public EventBytes {
 public:
  explicit MemoryBytes(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const { return bytes_.size(); }
  // The `count` bytes at `offset`; those that remain when fewer do.
  std::string_view view(uint64_t offset, uint64_t count) const {
    return offset >= bytes_.size() ? std::string_view() : std::string_view(bytes_).substr(offset, count);
  }
  size_t read(uint64_t offset, size_t count, RawEvent* into) const override {
    const std::string_view bytes = view(offset, count * sizeof(RawEvent));
    std::memcpy(into, bytes.data(), bytes.size() - bytes.size() % sizeof(RawEvent));
    return bytes.size() / sizeof(RawEvent);
  }

 private:
  const std::string bytes_;
};

// A capture file, read with pread at any offset: the reading and the capture's stored events
// share it, so the events are read back from the file the reading checked even if its path
// changes meanwhile.
class FileBytes final : public EventBytes {
 public:
  explicit FileBytes(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) {
      ::close(fd_);
      throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    }
    size_ = static_cast<uint64_t>(end);
  }
  ~FileBytes() override { ::close(fd_); }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads `count` bytes at `offset` into `into`; returns how many it read (fewer at the end of
  // the file), or -1 on an error.
  int64_t read_bytes(uint64_t offset, size_t count, char* into) const {
    size_t done = 0;
    while (done < count) {
      const ssize_t got = ::pread(fd_, into + done, count - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return -1;
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    return static_cast<int64_t>(done);
  }
  size_t read(uint64_t offset, size_t count, RawEvent* into) const override {
    const int64_t bytes = read_bytes(offset, count * sizeof(RawEvent), reinterpret_cast<char*>(into));
    return bytes < 0 ? 0 : static_cast<size_t>(bytes) / sizeof(RawEvent);
  }

 private:
  const std::string path_;
  const int fd_;
  uint64_t size_ = 0;
};

// Chunks of a capture in memory.
class MemorySource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(std::make_shared<const MemoryBytes>(bytes)) {}
  uint64_t size() const { return bytes_->size(); }
  std::string_view read(uint64_t offset, uint64_t count) { return bytes_->view(offset, count); }
  std::shared_ptr<const EventBytes> bytes() const { return bytes_; }

 private:
  std::shared_ptr<const MemoryBytes> bytes_;
};

// Chunks of a capture file, read one at a time into one buffer: reading a capture holds one
// chunk of its bytes at most (host events: one block of them), not the whole file.
class FileSource {
 public:
  explicit FileSource(const std::string& path) : file_(std::make_shared<const FileBytes>(path)) {}
  uint64_t size() const { return file_->size(); }
  // The `count` bytes at `offset`; those that remain when fewer do.
  std::string_view read(uint64_t offset, uint64_t count) {
    const uint64_t available = offset >= size() ? 0 : std::min(count, size() - offset);
    buffer_.resize(available);
    if (file_->read_bytes(offset, available, buffer_.data()) != static_cast<int64_t>(available)) {
      throw std::runtime_error(fmt::format("cannot read {}", file_->path()));
    }
    return buffer_;
  }
  std::shared_ptr<const EventBytes> bytes() const { return file_; }

 private:
  std::shared_ptr<const FileBytes> file_;
  std::string buffer_;
};

// What is wrong with the first of `count` events that fails its checks; "" when none does.
std::string first_invalid_event(const RawEvent* events, size_t count, const capture_checks::KnownIds& known) {
  try {
    for (size_t i = 0; i < count; ++i) capture_checks::check(events[i], known);
  } catch (const CaptureFormatError& error) {
    return error.what();
  }
  return "";
}

// Checks the HostEvents chunk whose payload (`size` bytes, checksum `crc`) begins at `offset`,
// reading its records a block at a time, and adds them to `assembler` as a stored run. Returns
// why it is not added, or "" when it is.
template <typename Source>
std::string add_host_events(Source& source, uint64_t offset, uint64_t size, uint32_t crc, CaptureAssembler& assembler) {
  const uint64_t prefix_bytes = std::min(size, kHostEventsPrefixBytes);
  const uint64_t records = (size - prefix_bytes) / sizeof(RawEvent);
  const uint64_t first_record = offset + prefix_bytes;
  const std::string prefix(source.read(offset, prefix_bytes));
  uint32_t checksum = crc32_of(prefix);
  EventKindCounts kinds{};
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  std::vector<RawEvent> block(std::min<uint64_t>(records, StoredEvents::kBlockEvents));
  const capture_checks::KnownIds known = assembler.known_ids();
  std::string invalid;  // what the first record that fails its checks has wrong
  for (uint64_t done = 0; done < records; done += block.size()) {
    const size_t n = std::min<uint64_t>(block.size(), records - done);
    if (source.bytes()->read(first_record + done * sizeof(RawEvent), n, block.data()) != n) {
      return "is cut short: the file shrank while it was read";
    }
    checksum = crc32_of(std::string_view(reinterpret_cast<const char*>(block.data()), n * sizeof(RawEvent)), checksum);
    count_event_kinds(block.data(), n, kinds);
    for (size_t i = 0; i < n; ++i) {
      first_ns = std::min(first_ns, block[i].ts_ns);
      last_ns = std::max(last_ns, block[i].ts_ns);
    }
    if (invalid.empty()) invalid = first_invalid_event(block.data(), n, known);
  }
  const uint64_t end_of_records = first_record + records * sizeof(RawEvent);
  checksum = crc32_of(source.read(end_of_records, offset + size - end_of_records), checksum);
  if (checksum != crc) return "is corrupt: its checksum does not match";
  if (!invalid.empty()) return fmt::format("does not decode: {}", invalid);
  ByteReader in(prefix);
  uint32_t index = 0;
  uint64_t count = 0;
  try {
    in(index);
    in(count);
  } catch (const CaptureFormatError& error) {
    return fmt::format("does not decode: {}", error.what());
  }
  if (count != records || end_of_records != offset + size) return "does not decode: its record count does not match its size";
  assembler.add_stored_run(index, {first_record, count}, kinds, first_ns, last_ns);
  return "";
}

template <typename Source>
CaptureReading read_chunks(Source& source) {
  uint64_t offset = read_file_header(source.read(0, capture_format::kFileHeaderBytes), source.size());
  CaptureAssembler assembler;
  CaptureReading reading;
  while (offset < source.size()) {
    ByteReader header(source.read(offset, capture_format::kChunkHeaderBytes));
    if (header.remaining() < capture_format::kChunkHeaderBytes) {
      reading.problem = fmt::format("the capture is cut short at byte {} (inside a chunk header)", offset);
      break;
    }
    uint32_t kind = 0;
    uint32_t crc = 0;
    uint64_t size = 0;
    header(kind);
    header(crc);
    header(size);
    const uint64_t payload_offset = offset + capture_format::kChunkHeaderBytes;
    if (size > source.size() - payload_offset) {
      reading.problem = fmt::format("the capture is cut short at byte {} (chunk of kind {} needs {} bytes, {} remain)",
                                    offset, kind, size, source.size() - payload_offset);
      break;
    }
    if (static_cast<ChunkKind>(kind) == ChunkKind::HostEvents) {
      // Checked a block at a time, and left in the capture's bytes until the trace is built.
      const std::string problem = add_host_events(source, payload_offset, size, crc, assembler);
      if (!problem.empty()) {
        reading.problem = fmt::format("the chunk at byte {} (kind {}) {}", offset, kind, problem);
        break;
      }
      offset = payload_offset + size;
      continue;
    }
    const std::string_view payload = source.read(payload_offset, size);
    if (crc32_of(payload) != crc) {
      reading.problem = fmt::format("the chunk at byte {} (kind {}) is corrupt: its checksum does not match", offset, kind);
      break;
    }
    try {
      assembler.add(static_cast<ChunkKind>(kind), payload);
    } catch (const CaptureFormatError& error) {
      reading.problem = fmt::format("the chunk at byte {} (kind {}) does not decode: {}", offset, kind, error.what());
      break;
    }
    offset = payload_offset + size;
    if (static_cast<ChunkKind>(kind) == ChunkKind::End) {
      reading.complete = true;
      break;
    }
  }
  if (!reading.complete && reading.problem.empty()) {
    reading.problem = "the capture has no end: it was cut after its last whole chunk (the process stopped while recording)";
  }
  reading.capture = assembler.finish(source.bytes());
  return reading;
}

}  // namespace

CaptureReading read_capture(std::string_view bytes) {
  MemorySource source(bytes);
  return read_chunks(source);
}

CaptureReading read_capture_file(const std::string& path) {
  FileSource source(path);
  return read_chunks(source);
}

}  // namespace perfprof
