#include "capture/capture_writer.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "capture/byte_codec.h"
#include "capture/capture_fields.h"
#include "capture/capture_file.h"
#include "capture/checksum.h"

namespace perfprof {
namespace {

using capture_format::ChunkKind;

// A thread's events go in chunks of at most this many (32 MiB), so no chunk is huge to check
// and a cut capture loses little.
constexpr size_t kEventsPerChunk = size_t{1} << 20;

}  // namespace

CaptureWriter::CaptureWriter(Sink& sink) : sink_(sink) {
  std::string header(capture_format::kMagic, sizeof(capture_format::kMagic));
  ByteWriter out(header);
  out(capture_format::kVersionMajor);
  out(capture_format::kVersionMinor);
  out(static_cast<uint32_t>(capture_format::kFileHeaderBytes));
  emit(header);
}

template <typename Encode>
void CaptureWriter::chunk(ChunkKind kind, Encode&& encode) {
  chunk(kind, std::forward<Encode>(encode), std::string_view());
}

template <typename Encode>
void CaptureWriter::chunk(ChunkKind kind, Encode&& encode, std::string_view raw) {
  payload_.clear();
  ByteWriter payload(payload_);
  encode(payload);
  std::string header;
  ByteWriter out(header);
  out(static_cast<uint32_t>(kind));
  out(crc32_of(raw, crc32_of(payload_)));
  out(static_cast<uint64_t>(payload_.size() + raw.size()));
  emit(header);
  emit(payload_);
  emit(raw);
}

void CaptureWriter::emit(std::string_view bytes) {
  if (!bytes.empty()) ok_ = ok_ && sink_.write(bytes);
}

void CaptureWriter::process(const ProcessInfo& process) {
  chunk(ChunkKind::Process, [&](ByteWriter& w) { w(process); });
}

template <typename T>
void CaptureWriter::new_entries(ChunkKind kind, const std::vector<T>& table, std::vector<bool>& written) {
  if (written.size() < table.size()) written.resize(table.size(), false);
  std::vector<uint32_t> ids;
  for (size_t id = 1; id < table.size(); ++id) {
    if (!table[id].empty() && !written[id]) ids.push_back(static_cast<uint32_t>(id));
  }
  if (ids.empty()) return;
  chunk(kind, [&](ByteWriter& w) {
    w(static_cast<uint64_t>(ids.size()));
    for (const uint32_t id : ids) {
      w(id);
      w(table[id]);
    }
  });
  for (const uint32_t id : ids) written[id] = true;
}

void CaptureWriter::strings(const std::vector<std::string>& strings) {
  new_entries(ChunkKind::Strings, strings, written_strings_);
}

void CaptureWriter::arg_sets(const std::vector<ArgSet>& sets) {
  new_entries(ChunkKind::ArgSets, sets, written_arg_sets_);
}

void CaptureWriter::thread(const ThreadEvents& thread) {
  const auto known = thread_names_.find(thread.index);
  if (known == thread_names_.end() || known->second != thread.name) {
    chunk(ChunkKind::Thread, [&](ByteWriter& w) {
      w(thread.index);
      w(thread.os_tid);
      w(thread.name);
    });
    thread_names_[thread.index] = thread.name;
  }
  for (size_t first = 0; first < thread.events.size(); first += kEventsPerChunk) {
    const size_t count = std::min(kEventsPerChunk, thread.events.size() - first);
    const auto* events = reinterpret_cast<const char*>(thread.events.data() + first);
    chunk(
        ChunkKind::HostEvents,
        [&](ByteWriter& w) {
          w(thread.index);
          w(static_cast<uint64_t>(count));
        },
        std::string_view(events, count * sizeof(RawEvent)));
  }
}

void CaptureWriter::host(const CollectedEvents& host) {
  for (const ThreadEvents& thread : host.threads) this->thread(thread);
  if (!host.completed.empty()) chunk(ChunkKind::CompletedRanges, [&](ByteWriter& w) { w(host.completed); });
  if (!host.memory.empty() || !host.memory.storages.empty()) {
    chunk(ChunkKind::MemoryEvents, [&](ByteWriter& w) { w(host.memory); });
  }
  if (!host.observed_tensors.empty()) {
    chunk(ChunkKind::ObservedTensors, [&](ByteWriter& w) { w(host.observed_tensors); });
  }
  if (host.dropped_events != 0 || host.import_losses.events != 0 || host.import_losses.failed_reads != 0) {
    chunk(ChunkKind::Losses, [&](ByteWriter& w) {
      w(host.dropped_events);
      w(host.import_losses.events);
      w(host.import_losses.failed_reads);
    });
  }
}

void CaptureWriter::other_threads(const std::vector<ThreadName>& threads) {
  if (!threads.empty()) chunk(ChunkKind::OtherThreads, [&](ByteWriter& w) { w(threads); });
}

void CaptureWriter::gpu(const GpuInput& gpu) {
  chunk(ChunkKind::GpuStatus, [&](ByteWriter& w) {
    w(gpu.collected_any);
    w(gpu.collected.dropped_records);
  });
  const GpuCollected& collected = gpu.collected;
  if (!collected.devices.empty()) chunk(ChunkKind::GpuDevices, [&](ByteWriter& w) { w(collected.devices); });
  if (!collected.activities.empty()) chunk(ChunkKind::GpuActivities, [&](ByteWriter& w) { w(collected.activities); });
  if (!collected.api_calls.empty()) chunk(ChunkKind::ApiCalls, [&](ByteWriter& w) { w(collected.api_calls); });
  if (!collected.external_ids.empty()) {
    chunk(ChunkKind::ExternalIds, [&](ByteWriter& w) {
      std::vector<std::pair<uint32_t, uint64_t>> ids(collected.external_ids.begin(), collected.external_ids.end());
      std::sort(ids.begin(), ids.end());  // the same capture writes the same bytes
      w(static_cast<uint64_t>(ids.size()));
      for (const auto& [correlation, range_id] : ids) {
        w(correlation);
        w(range_id);
      }
    });
  }
  if (!gpu.stream_annotations.empty()) {
    chunk(ChunkKind::StreamAnnotations, [&](ByteWriter& w) { w(gpu.stream_annotations); });
  }
  if (!gpu.kernel_metrics.columns.empty()) {
    chunk(ChunkKind::KernelMetrics, [&](ByteWriter& w) { w(gpu.kernel_metrics); });
  }
}

void CaptureWriter::window(const CollectionWindow& window) {
  chunk(ChunkKind::Window, [&](ByteWriter& w) { w(window); });
}

void CaptureWriter::metadata(const std::vector<RunMetadata>& entries) {
  if (!entries.empty()) chunk(ChunkKind::Metadata, [&](ByteWriter& w) { w(entries); });
}

void CaptureWriter::end() {
  chunk(ChunkKind::End, [](ByteWriter&) {});
}

bool write_capture(const Capture& capture, Sink& sink) {
  CaptureWriter out(sink);
  out.process(capture.process);
  out.metadata(capture.metadata);
  out.strings(capture.strings);
  out.arg_sets(capture.arg_sets);
  out.other_threads(capture.other_threads);
  if (capture.stored.empty()) {
    out.host(capture.host);
  } else {
    out.host(loaded_host(capture));
  }
  out.gpu(capture.gpu);
  out.window(capture.window);
  out.end();
  return out.ok();
}

}  // namespace perfprof
