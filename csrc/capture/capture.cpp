#include "capture/capture.h"

#include <iterator>
#include <stdexcept>
#include <utility>

namespace perfprof {
namespace {

template <typename T>
void append(std::vector<T>& into, std::vector<T>& more) {
  into.insert(into.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

// The entries of an interned table `more` holds (others are empty) into `into`, by id; id 0,
// the empty entry, is always there.
template <typename T>
void merge_by_id(std::vector<T>& into, std::vector<T>& more) {
  if (into.size() < more.size()) into.resize(more.size());
  for (size_t id = 0; id < more.size(); ++id) {
    if (!more[id].empty()) into[id] = std::move(more[id]);
  }
  if (into.empty()) into.emplace_back();
}

}  // namespace

void append_capture(Capture& into, Capture more) {
  if (!more.stored.empty()) throw std::logic_error("append_capture: the capture appended has stored events");
  // The process as the capture first described it: its clock offset is the one the capture file
  // holds, so a trace built from `into` and one built from the file agree to the nanosecond.
  if (into.process.pid == 0) into.process = std::move(more.process);
  merge_by_id(into.strings, more.strings);
  merge_by_id(into.arg_sets, more.arg_sets);
  append(into.other_threads, more.other_threads);
  append(into.metadata, more.metadata);
  append_collected(into.host, std::move(more.host));
  GpuInput& gpu = into.gpu;
  append(gpu.collected.activities, more.gpu.collected.activities);
  append(gpu.collected.api_calls, more.gpu.collected.api_calls);
  gpu.collected.external_ids.insert(more.gpu.collected.external_ids.begin(), more.gpu.collected.external_ids.end());
  append(gpu.collected.devices, more.gpu.collected.devices);
  gpu.collected.dropped_records += more.gpu.collected.dropped_records;
  append(gpu.stream_annotations, more.gpu.stream_annotations);
  KernelMetricsInput& metrics = gpu.kernel_metrics;
  if (metrics.columns.empty()) metrics.columns = std::move(more.gpu.kernel_metrics.columns);
  append(metrics.kernels, more.gpu.kernel_metrics.kernels);
  metrics.kernels_left_out += more.gpu.kernel_metrics.kernels_left_out;
  metrics.kernels_unmatched += more.gpu.kernel_metrics.kernels_unmatched;
  gpu.collected_any |= more.gpu.collected_any;
  if (more.window.end_ns != 0) into.window = more.window;
}

uint64_t host_event_count(const Capture& capture) {
  uint64_t count = capture.stored.count;
  count += event_count(capture.host);
  return count;
}

CollectedEvents loaded_host(const Capture& capture) {
  CollectedEvents host = capture.host;
  for (ThreadEvents& thread : host.threads) {
    std::vector<RawEvent> events;
    host.dropped_events += for_each_event_block(capture, thread, [&](const RawEvent* block, size_t count) {
      events.insert(events.end(), block, block + count);
    });
    thread.events = std::move(events);
  }
  return host;
}

EventKindCounts event_kind_counts(const Capture& capture) {
  EventKindCounts counts = capture.stored.kinds;
  for (const ThreadEvents& thread : capture.host.threads) {
    count_event_kinds(thread.events.data(), thread.events.size(), counts);
  }
  return counts;
}

}  // namespace perfprof
