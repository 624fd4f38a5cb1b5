#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "capture/byte_codec.h"
#include "capture/capture_fields.h"
#include "capture/checksum.h"
#include "capture/capture_file.h"
#include "capture/capture_format.h"

namespace perfprof {
namespace {

using capture_format::ChunkKind;

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
      case ChunkKind::Strings: add_entries(capture_.strings, in, "string"); break;
      case ChunkKind::ArgSets: add_entries(capture_.arg_sets, in, "argument set"); break;
      case ChunkKind::Thread: add_thread(in); break;
      case ChunkKind::HostEvents: add_host_events(in); break;
      case ChunkKind::CompletedRanges: append(capture_.host.completed, in); break;
      case ChunkKind::MemoryEvents: add_memory(in); break;
      case ChunkKind::ObservedTensors: append(capture_.host.observed_tensors, in); break;
      case ChunkKind::Losses: add_losses(in); break;
      case ChunkKind::OtherThreads: append(capture_.other_threads, in); break;
      case ChunkKind::GpuActivities: append(capture_.gpu.collected.activities, in); break;
      case ChunkKind::ApiCalls: append(capture_.gpu.collected.api_calls, in); break;
      case ChunkKind::ExternalIds: add_external_ids(in); break;
      case ChunkKind::GpuDevices: append(capture_.gpu.collected.devices, in); break;
      case ChunkKind::StreamAnnotations: append(capture_.gpu.stream_annotations, in); break;
      case ChunkKind::GpuStatus: add_gpu_status(in); break;
      case ChunkKind::End: break;
      default: return;  // a kind a newer minor version added: skipped
    }
    if (in.remaining() != 0) throw CaptureFormatError("the chunk has bytes after its fields");
  }

  Capture finish() {
    if (capture_.strings.empty()) capture_.strings.emplace_back();
    if (capture_.arg_sets.empty()) capture_.arg_sets.emplace_back();
    if (!has_window_) capture_.window = span_of_events();
    return std::move(capture_);
  }

 private:
  template <typename T>
  static T decoded(ByteReader& in) {
    T value;
    in(value);
    return value;
  }

  template <typename T>
  static void append(std::vector<T>& to, ByteReader& in) {
    std::vector<T> items;
    in(items);
    to.insert(to.end(), std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
  }

  // (id, entry) pairs of an interned table (strings, argument sets); id 0 is the empty entry.
  template <typename T>
  static void add_entries(std::vector<T>& table, ByteReader& in, const char* what) {
    uint64_t count = 0;
    in(count);
    std::vector<std::pair<uint32_t, T>> entries;
    for (uint64_t i = 0; i < count; ++i) {
      uint32_t id = 0;
      T entry;
      in(id);
      in(entry);
      if (id == 0) throw CaptureFormatError(fmt::format("{} 0 is given a value", what));
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

  void add_host_events(ByteReader& in) {
    uint32_t index = 0;
    uint64_t count = 0;
    in(index);
    in(count);
    std::vector<RawEvent> events;
    in.raw(events, count);
    std::vector<RawEvent>& to = thread_of(index).events;
    to.insert(to.end(), events.begin(), events.end());
  }

  void add_memory(ByteReader& in) {
    memory::MemoryEvents events;
    in(events);
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
    std::vector<std::pair<uint32_t, uint64_t>> ids(std::min<uint64_t>(count, in.remaining()));
    if (ids.size() != count) throw CaptureFormatError("a list is longer than its chunk");
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
    for (const ThreadEvents& thread : capture_.host.threads) {
      for (const RawEvent& event : thread.events) note(event.ts_ns, event.ts_ns);
    }
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
  std::unordered_map<uint32_t, size_t> thread_rows_;  // buffer index -> row in capture_.host.threads
};

// The bytes of a capture in memory.
class MemorySource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const { return bytes_.size(); }
  // The `count` bytes at `offset`; those that remain when fewer do.
  std::string_view read(uint64_t offset, uint64_t count) {
    return offset >= bytes_.size() ? std::string_view() : bytes_.substr(offset, count);
  }

 private:
  std::string_view bytes_;
};

// The bytes of a capture file, read a chunk at a time into one buffer: reading a capture holds
// one chunk of its bytes at most, not the whole file.
class FileSource {
 public:
  explicit FileSource(const std::string& path) : path_(path), file_(path, std::ios::binary) {
    if (!file_) throw std::runtime_error(fmt::format("cannot open {}", path));
    file_.seekg(0, std::ios::end);
    size_ = static_cast<uint64_t>(file_.tellg());
  }
  uint64_t size() const { return size_; }
  std::string_view read(uint64_t offset, uint64_t count) {
    const uint64_t available = offset >= size_ ? 0 : std::min(count, size_ - offset);
    buffer_.resize(available);
    file_.seekg(static_cast<std::streamoff>(offset));
    if (available > 0 && !file_.read(buffer_.data(), static_cast<std::streamsize>(available))) {
      throw std::runtime_error(fmt::format("cannot read {}", path_));
    }
    return buffer_;
  }

 private:
  std::string path_;
  std::ifstream file_;
  uint64_t size_ = 0;
  std::string buffer_;
};

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
  reading.capture = assembler.finish();
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
