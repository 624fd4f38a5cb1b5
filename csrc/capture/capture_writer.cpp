#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "capture/byte_codec.h"
#include "capture/capture_fields.h"
#include "capture/checksum.h"
#include "capture/capture_file.h"
#include "capture/capture_format.h"

namespace perfprof {
namespace {

using capture_format::ChunkKind;

// A thread's events go in chunks of at most this many (32 MiB), so no chunk is huge to check
// and a cut capture loses little.
constexpr size_t kEventsPerChunk = size_t{1} << 20;

class ChunkWriter {
 public:
  explicit ChunkWriter(Sink& sink) : sink_(sink) {}

  void file_header() {
    std::string header(capture_format::kMagic, sizeof(capture_format::kMagic));
    ByteWriter out(header);
    out(capture_format::kVersionMajor);
    out(capture_format::kVersionMinor);
    out(static_cast<uint32_t>(capture_format::kFileHeaderBytes));
    emit(header);
  }

  // One chunk whose payload `encode(ByteWriter&)` writes.
  template <typename Encode>
  void chunk(ChunkKind kind, Encode&& encode) {
    payload_.clear();
    ByteWriter payload(payload_);
    encode(payload);
    std::string header;
    ByteWriter out(header);
    out(static_cast<uint32_t>(kind));
    out(crc32_of(payload_));
    out(static_cast<uint64_t>(payload_.size()));
    emit(header);
    emit(payload_);
  }

  bool ok() const { return ok_; }

 private:
  void emit(std::string_view bytes) { ok_ = ok_ && sink_.write(bytes); }

  Sink& sink_;
  std::string payload_;
  bool ok_ = true;
};

void write_strings(ChunkWriter& out, const std::vector<std::string>& strings) {
  out.chunk(ChunkKind::Strings, [&](ByteWriter& w) {
    const auto used = static_cast<uint64_t>(std::count_if(strings.begin(), strings.end(),
                                                          [](const std::string& s) { return !s.empty(); }));
    w(used);
    for (size_t id = 0; id < strings.size(); ++id) {
      if (strings[id].empty()) continue;
      w(static_cast<uint32_t>(id));
      w(strings[id]);
    }
  });
}

void write_thread(ChunkWriter& out, const ThreadEvents& thread) {
  out.chunk(ChunkKind::Thread, [&](ByteWriter& w) {
    w(thread.index);
    w(thread.os_tid);
    w(thread.name);
  });
  for (size_t first = 0; first < thread.events.size(); first += kEventsPerChunk) {
    const size_t count = std::min(kEventsPerChunk, thread.events.size() - first);
    out.chunk(ChunkKind::HostEvents, [&](ByteWriter& w) {
      w(thread.index);
      w(static_cast<uint64_t>(count));
      w.raw(thread.events.data() + first, count);
    });
  }
}

void write_host(ChunkWriter& out, const CollectedEvents& host) {
  for (const ThreadEvents& thread : host.threads) write_thread(out, thread);
  out.chunk(ChunkKind::CompletedRanges, [&](ByteWriter& w) { w(host.completed); });
  out.chunk(ChunkKind::MemoryEvents, [&](ByteWriter& w) { w(host.memory); });
  out.chunk(ChunkKind::ObservedTensors, [&](ByteWriter& w) { w(host.observed_tensors); });
  out.chunk(ChunkKind::Losses, [&](ByteWriter& w) {
    w(host.dropped_events);
    w(host.import_losses.events);
    w(host.import_losses.failed_reads);
  });
}

void write_gpu(ChunkWriter& out, const GpuInput& gpu) {
  out.chunk(ChunkKind::GpuStatus, [&](ByteWriter& w) {
    w(gpu.collected_any);
    w(gpu.collected.dropped_records);
  });
  out.chunk(ChunkKind::GpuDevices, [&](ByteWriter& w) { w(gpu.collected.devices); });
  out.chunk(ChunkKind::GpuActivities, [&](ByteWriter& w) { w(gpu.collected.activities); });
  out.chunk(ChunkKind::ApiCalls, [&](ByteWriter& w) { w(gpu.collected.api_calls); });
  out.chunk(ChunkKind::ExternalIds, [&](ByteWriter& w) {
    std::vector<std::pair<uint32_t, uint64_t>> ids(gpu.collected.external_ids.begin(), gpu.collected.external_ids.end());
    std::sort(ids.begin(), ids.end());  // the same capture writes the same bytes
    w(static_cast<uint64_t>(ids.size()));
    for (const auto& [correlation, range_id] : ids) {
      w(correlation);
      w(range_id);
    }
  });
  out.chunk(ChunkKind::StreamAnnotations, [&](ByteWriter& w) { w(gpu.stream_annotations); });
}

}  // namespace

bool write_capture(const Capture& capture, Sink& sink) {
  ChunkWriter out(sink);
  out.file_header();
  out.chunk(ChunkKind::Process, [&](ByteWriter& w) { w(capture.process); });
  write_strings(out, capture.strings);
  out.chunk(ChunkKind::OtherThreads, [&](ByteWriter& w) { w(capture.other_threads); });
  write_host(out, capture.host);
  write_gpu(out, capture.gpu);
  out.chunk(ChunkKind::Window, [&](ByteWriter& w) { w(capture.window); });
  out.chunk(ChunkKind::End, [](ByteWriter&) {});
  return out.ok();
}

}  // namespace perfprof
