#include "trace/trace_builder.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "trace/forward_backward.h"

namespace perfprof {
namespace {

constexpr int64_t kOpen = INT64_MIN;

// Whether a GPU record's timestamps can be those of the window; if not, it is dropped and
// counted. CUPTI stamps 0 the kernels it had no device memory to time, and a record stamped on
// another clock (set by another CUPTI client, docs/reliability.md) lands far past the window's
// end: kept, either would stretch every GPU time computed from the trace. GPU work may start
// after the window's end only if a call made in the window launched it (`launched_at`: that
// call's start), before it: queued behind other work, it ran after the profiler stopped.
bool timed(int64_t start_ns, int64_t end_ns) { return start_ns > 0 && end_ns >= start_ns; }

bool api_call_stamped_in_window(TraceModel& model, const ApiCall& call) {
  const bool plausible = timed(call.start_ns, call.end_ns) && call.start_ns <= model.window_end_ns;
  if (!plausible) ++model.stats.gpu_records_outside_window;
  return plausible;
}

bool activity_stamped_in_window(TraceModel& model, const GpuActivity& activity,
                                const std::unordered_map<uint32_t, int64_t>& launched_at) {
  bool plausible = timed(activity.start_ns, activity.end_ns);
  if (plausible && activity.start_ns > model.window_end_ns) {
    const auto launch = launched_at.find(activity.correlation);
    plausible = launch != launched_at.end() && launch->second <= activity.start_ns;
  }
  if (!plausible) ++model.stats.gpu_records_outside_window;
  return plausible;
}

// The start of each CUDA API call made in the window, by correlation id.
std::unordered_map<uint32_t, int64_t> launches_in_window(const TraceModel& model, const std::vector<ApiCall>& calls) {
  std::unordered_map<uint32_t, int64_t> launched_at;
  for (const ApiCall& call : calls) {
    if (timed(call.start_ns, call.end_ns) && call.start_ns >= model.window_begin_ns &&
        call.start_ns <= model.window_end_ns) {
      launched_at.emplace(call.correlation, call.start_ns);
    }
  }
  return launched_at;
}

class Builder {
 public:
  Builder(TraceModel& model, ArgSetTable& arg_sets, std::vector<std::string>& strings,
          const std::vector<ThreadName>& thread_names)
      : model_(model), arg_sets_(arg_sets), strings_(strings) {
    for (const ThreadName& thread : thread_names) thread_names_.emplace(thread.os_tid, thread.name);
  }

  // The events of `thread` in `capture`, a block at a time: stored events that cannot be read
  // back are counted as dropped.
  void add_thread(const Capture& capture, ThreadEvents& thread) {
    const auto track = static_cast<uint32_t>(model_.threads.size());
    model_.threads.push_back({thread.index, thread.os_tid, std::move(thread.name)});
    open_stack_.clear();
    model_.stats.dropped_events += for_each_event_block(capture, thread, [&](const RawEvent* events, size_t count) {
      for (size_t i = 0; i < count; ++i) add_event(events[i], track);
    });
  }

  // Pairs ends that did not close the innermost open range of their thread, then closes what
  // is still open at the window end.
  void pair_remaining() {
    std::unordered_map<uint64_t, size_t> open;
    RangeTable& r = model_.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.end_ns[i] == kOpen) open.emplace(r.id[i], i);
    }
    for (const auto& [event, track] : deferred_ends_) {
      auto it = open.find(event.payload);
      if (it == open.end()) {
        ++model_.stats.unmatched_range_ends;
        continue;
      }
      close(it->second, event, track);
      open.erase(it);
    }
    // Every range still open, those sharing an id with another (a damaged capture's) included.
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.end_ns[i] != kOpen) continue;
      r.end_ns[i] = std::max(model_.window_end_ns, r.begin_ns[i]);
      r.flags[i] |= kRangeUnfinished;
      ++model_.stats.unfinished_ranges;
    }
  }

  // CUDA API calls become ranges of the thread that made them, among its host ranges.
  void add_api_calls(const std::vector<ApiCall>& calls, const std::unordered_map<uint32_t, uint64_t>& external) {
    for (const ApiCall& call : calls) {
      if (!api_call_stamped_in_window(model_, call)) continue;
      if (call.start_ns < model_.window_begin_ns) {  // made in the warm-up: its range would begin before the window
        ++model_.stats.events_before_window;
        continue;
      }
      const auto found = external.find(call.correlation);
      const size_t row = append_complete_row(call.start_ns, call.end_ns, track_of(call.os_tid),
                                             kApiCallIdTag | call.correlation);
      RangeTable& r = model_.ranges;
      r.name[row] = call.name;
      r.kind[row] = call.driver ? RangeKind::CudaDriver : RangeKind::CudaRuntime;
      r.args[row] = arg_sets_.intern({{{ArgKey::Cbid, int64_t{call.cbid}}}});
      r.correlation[row] = call.correlation;
      r.external_id[row] = found == external.end() ? 0 : found->second;
    }
    sort_ranges();
  }

  void add_completed_ranges(std::vector<CompletedRange> ranges) {
    ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                                [&](const CompletedRange& range) {
                                  return range.begin_ns < model_.window_begin_ns || range.begin_ns > model_.window_end_ns;
                                }),
                 ranges.end());
    for (size_t k = 0; k < ranges.size(); ++k) {
      const CompletedRange& range = ranges[k];
      const size_t row = append_complete_row(range.begin_ns, range.end_ns, track_of(range.os_tid), kCompletedIdTag + k);
      RangeTable& r = model_.ranges;
      r.name[row] = range.name;
      r.kind[row] = range.kind;
      r.args[row] = range.args;
      r.sequence[row] = range.sequence;
      if (range.imported) r.flags[row] |= kRangeImported;
    }
    for (const auto& [forward, backward] : link_forward_backward(ranges)) {
      linked_ids_.emplace_back(kCompletedIdTag + forward, kCompletedIdTag + backward);
    }
    sort_ranges();
  }

  void add_memory(memory::MemoryEvents events, const std::vector<memory::ObservedTensor>& observed) {
    MemoryTrace& memory = model_.memory;
    // Roles first: matching a tensor to the storage at its address needs every lifetime.
    memory::add_observed_roles(events, observed);
    memory.events = memory::restrict_to_window(std::move(events), model_.window_begin_ns, model_.window_end_ns);
    for (const memory::Allocation& allocation : memory.events.allocations) {
      memory.allocation_track.push_back(track_of(allocation.os_tid));
    }
  }

  void finish() {
    classify_nesting();
    resolve_links();
  }

 private:
  void add_event(const RawEvent& event, uint32_t track) {
    if (event.ts_ns < model_.window_begin_ns) {
      ++model_.stats.events_before_window;
      return;
    }
    switch (event.kind) {
      case EventKind::RangeBegin: begin_range(event, track); break;
      case EventKind::RangeEnd: end_range(event, track); break;
      case EventKind::Instant: add_instant(event, track); break;
      case EventKind::Counter: add_counter(event, track); break;
      case EventKind::RangeSequence: set_sequence(event); break;
    }
  }

  void begin_range(const RawEvent& event, uint32_t track) {
    RangeRow row;
    row.begin_ns = event.ts_ns;
    row.end_ns = kOpen;
    row.name = event.range_kind == RangeKind::Step && is_step_prefix(event.name) ? step_name(step_number(event))
                                                                               : event.name;
    row.kind = event.range_kind;
    row.args = event.args;
    row.track = row.end_track = track;
    row.id = event.payload;
    open_stack_.emplace_back(event.payload, model_.ranges.append(row));
  }

  size_t append_complete_row(int64_t begin_ns, int64_t end_ns, uint32_t track, uint64_t id) {
    RangeRow row;
    row.begin_ns = begin_ns;
    row.end_ns = std::max(begin_ns, end_ns);
    row.track = row.end_track = track;
    row.id = id;
    return model_.ranges.append(row);
  }

  void set_sequence(const RawEvent& event) {
    if (!open_stack_.empty()) model_.ranges.sequence[open_stack_.back().second] = static_cast<int64_t>(event.payload);
  }

  void end_range(const RawEvent& event, uint32_t track) {
    if (!open_stack_.empty() && open_stack_.back().first == event.payload) {
      close(open_stack_.back().second, event, track);
      open_stack_.pop_back();
    } else {
      deferred_ends_.emplace_back(event, track);
    }
  }

  void close(size_t i, const RawEvent& end, uint32_t end_track) {
    model_.ranges.end_ns[i] = end.ts_ns;
    model_.ranges.end_track[i] = end_track;
    if (step_ended_by_stop(end)) model_.ranges.flags[i] |= kRangeStepTail;
  }

  void add_instant(const RawEvent& event, uint32_t track) {
    model_.instants.append({event.ts_ns, event.name, event.range_kind, event.args, track});
  }

  void add_counter(const RawEvent& event, uint32_t track) {
    double value = 0;
    std::memcpy(&value, &event.payload, sizeof(value));
    model_.counters.append({event.ts_ns, event.name, value, track, counter_metric(event)});
  }

  // Ranges are stored per track in begin order, outer range first on equal begins. A range that
  // ends on another thread, or ends after the range enclosing it, cannot be drawn as a nested
  // slice of its thread: it becomes an async slice so every exported thread slice nests. When
  // an event (operator, annotation, ...) and Python frames cross, the frames become async: torch's
  // record_function begins inside one Python call and ends inside another, and the operators and
  // annotations are what the trace's tree (self times, key_averages, viewers) is built from.
  //
  // A CUDA API call's "External id" becomes its innermost enclosing host range (record_function,
  // mstx range, ProfilerStep, ...); CUPTI's external correlation id stays for calls outside any.
  void classify_nesting() {
    RangeTable& r = model_.ranges;
    std::vector<size_t> enclosing;  // rows of the ranges open at the current row, innermost last
    uint32_t current_track = UINT32_MAX;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.track[i] != current_track) {
        current_track = r.track[i];
        enclosing.clear();
      }
      while (!enclosing.empty() && r.end_ns[enclosing.back()] <= r.begin_ns[i]) enclosing.pop_back();
      if (r.end_track[i] != r.track[i]) {
        mark_async(i);
        continue;
      }
      if (!enclosing.empty()) absorb_clock_error(i, enclosing.back());
      // The enclosing ranges that end before this one: the innermost ones, on top of the stack.
      const auto crossed = std::find_if(enclosing.begin(), enclosing.end(),
                                        [&](size_t row) { return r.end_ns[row] < r.end_ns[i]; });
      const auto is_frame = [&](size_t row) { return is_python_frame(r.kind[row]); };
      if (crossed != enclosing.end() && !is_frame(i) && std::all_of(crossed, enclosing.end(), is_frame)) {
        for (auto frame = crossed; frame != enclosing.end(); ++frame) mark_async(*frame);
        enclosing.erase(crossed, enclosing.end());
      } else if (crossed != enclosing.end()) {
        mark_async(i);
        continue;
      }
      if (r.correlation[i] != 0 && !enclosing.empty()) {
        const size_t parent = enclosing.back();  // a host range, or the runtime call of a driver call
        const uint64_t inherited = r.correlation[parent] == 0 ? r.id[parent] : r.external_id[parent];
        if (inherited != 0) r.external_id[i] = inherited;
      }
      enclosing.push_back(i);
    }
  }

  // torch's times reach perfprof's clock through Unix time (torch's conversion of its own clock,
  // then perfprof's offset) and are off by up to a few hundred nanoseconds: enough for an
  // operator to seem to end after the Python call that made it returned. An imported range
  // ending that little after its parent ends with it (then so do its imported children). Only
  // imported ranges move: a Python call ending just after an imported range around it really
  // does (torch's record_function ends inside the call of __exit__).
  void absorb_clock_error(size_t i, size_t parent) {
    RangeTable& r = model_.ranges;
    const int64_t overrun = r.end_ns[i] - r.end_ns[parent];
    if ((r.flags[i] & kRangeImported) && overrun > 0 && overrun <= kClockErrorBoundNs) r.end_ns[i] = r.end_ns[parent];
  }

  // Range ids of linked operators become rows, now that rows are in their final order.
  void resolve_links() {
    if (linked_ids_.empty()) return;
    std::unordered_map<uint64_t, size_t> row_of;
    for (const auto& [forward, backward] : linked_ids_) {
      row_of.emplace(forward, SIZE_MAX);
      row_of.emplace(backward, SIZE_MAX);
    }
    const RangeTable& r = model_.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      if (auto it = row_of.find(r.id[i]); it != row_of.end()) it->second = i;
    }
    for (const auto& [forward, backward] : linked_ids_) {
      model_.forward_backward.push_back({row_of[forward], row_of[backward]});
    }
  }

  void mark_async(size_t i) {
    model_.ranges.flags[i] |= kRangeAsync;
    ++model_.stats.async_ranges;
  }

  uint32_t track_of(int64_t os_tid) {
    for (uint32_t t = 0; t < model_.threads.size(); ++t) {
      if (model_.threads[t].os_tid == os_tid) return t;
    }
    const auto index = static_cast<uint32_t>(model_.threads.size());
    model_.threads.push_back({UINT32_MAX - index, os_tid, os_tid == kGcTrackTid ? "Python GC" : thread_name(os_tid)});
    return index;
  }

  std::string thread_name(int64_t os_tid) const {
    const auto found = thread_names_.find(os_tid);
    return found == thread_names_.end() ? fmt::format("thread {}", os_tid) : found->second;
  }

  // Back to per-track begin order (outer range first on equal begins) after appending rows.
  void sort_ranges() {
    RangeTable& r = model_.ranges;
    std::vector<size_t> order(r.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (r.track[a] != r.track[b]) return r.track[a] < r.track[b];
      if (r.begin_ns[a] != r.begin_ns[b]) return r.begin_ns[a] < r.begin_ns[b];
      return r.end_ns[a] > r.end_ns[b];
    });
    r.reorder(order);
  }

  // Bound of the error between torch's converted times and perfprof's clock, far below the
  // microseconds by which an imported range really crosses a Python call (torch's
  // record_function outlives the call that began it by its whole body and __enter__'s return).
  static constexpr int64_t kClockErrorBoundNs = 1000;

  // Async ids of API calls that cannot nest; apart from host range ids (tagged below bit 63).
  static constexpr uint64_t kApiCallIdTag = uint64_t{1} << 63;
  static constexpr uint64_t kCompletedIdTag = uint64_t{1} << 62;

  TraceModel& model_;
  // Whether `name` is the step prefix alone: the begin event of a step carrying its number.
  bool is_step_prefix(StringId name) {
    if (step_prefix_ == kEmptyString && name < strings_.size() && strings_[name] == kProfilerStepPrefix) {
      step_prefix_ = name;
    }
    return name != kEmptyString && name == step_prefix_;
  }

  // The id of "ProfilerStep#<step>" among the trace's strings, added to them the first time.
  StringId step_name(uint64_t step) {
    const auto [found, inserted] = step_names_.try_emplace(step, static_cast<StringId>(strings_.size()));
    if (inserted) strings_.push_back(fmt::format("{}{}", kProfilerStepPrefix, step));
    return found->second;
  }

  ArgSetTable& arg_sets_;  // the capture's, and what building adds (API calls' args)
  std::vector<std::string>& strings_;  // the capture's, and the step names building adds
  StringId step_prefix_ = kEmptyString;
  std::unordered_map<uint64_t, StringId> step_names_;
  std::unordered_map<int64_t, std::string> thread_names_;  // threads without a buffer of their own
  std::vector<std::pair<uint64_t, size_t>> open_stack_;  // (range id, row) of this thread
  std::vector<std::pair<RawEvent, uint32_t>> deferred_ends_;
  std::vector<std::pair<uint64_t, uint64_t>> linked_ids_;  // (forward, backward) range ids
};

// The GPU span of each mstx range given a stream: from the first to the last GPU activity on
// that stream launched by a CUDA call made on the range's thread while the range was open.
// Indexes are built once, so many annotated ranges cost O(log n + their own work) each.
std::vector<GpuActivity> stream_annotation_spans(const TraceModel& model, const GpuInput& gpu) {
  std::vector<GpuActivity> spans;
  if (gpu.stream_annotations.empty()) return spans;
  const RangeTable& r = model.ranges;
  std::unordered_map<uint64_t, size_t> row_of;
  for (const StreamAnnotation& annotation : gpu.stream_annotations) row_of.emplace(annotation.range_id, SIZE_MAX);
  for (size_t i = 0; i < r.size(); ++i) {
    if (auto it = row_of.find(r.id[i]); it != row_of.end()) it->second = i;
  }
  std::unordered_map<int64_t, std::vector<const ApiCall*>> calls_of_thread;  // by start time
  for (const ApiCall& call : gpu.collected.api_calls) calls_of_thread[call.os_tid].push_back(&call);
  for (auto& [tid, calls] : calls_of_thread) {
    std::sort(calls.begin(), calls.end(), [](const ApiCall* a, const ApiCall* b) { return a->start_ns < b->start_ns; });
  }
  std::unordered_multimap<uint32_t, const GpuActivity*> launched_by;
  for (const GpuActivity& activity : gpu.collected.activities) launched_by.emplace(activity.correlation, &activity);

  for (const StreamAnnotation& annotation : gpu.stream_annotations) {
    const size_t i = row_of[annotation.range_id];
    if (i == SIZE_MAX) continue;
    const auto thread = calls_of_thread.find(model.threads[r.track[i]].os_tid);
    if (thread == calls_of_thread.end()) continue;
    const std::vector<const ApiCall*>& calls = thread->second;
    auto call = std::lower_bound(calls.begin(), calls.end(), r.begin_ns[i],
                                 [](const ApiCall* c, int64_t ns) { return c->start_ns < ns; });
    GpuActivity span;
    span.kind = GpuActivityKind::UserAnnotation;
    span.name = r.name[i];
    span.stream = annotation.stream;
    span.start_ns = INT64_MAX;
    span.end_ns = INT64_MIN;
    for (; call != calls.end() && (*call)->start_ns <= r.end_ns[i]; ++call) {
      const auto [first, last] = launched_by.equal_range((*call)->correlation);
      for (auto it = first; it != last; ++it) {
        const GpuActivity& activity = *it->second;
        if (activity.stream != annotation.stream) continue;
        span.device = activity.device;
        span.context = activity.context;
        span.start_ns = std::min(span.start_ns, activity.start_ns);
        span.end_ns = std::max(span.end_ns, activity.end_ns);
      }
    }
    if (span.start_ns <= span.end_ns) spans.push_back(span);
  }
  return spans;
}

void add_gpu_activities(TraceModel& model, GpuInput& gpu) {
  GpuTrace& out = model.gpu;
  out.collected = gpu.collected_any;
  out.devices = std::move(gpu.collected.devices);
  model.stats.gpu_dropped_records = gpu.collected.dropped_records;
  std::vector<GpuActivity> spans = stream_annotation_spans(model, gpu);
  const std::unordered_map<uint32_t, int64_t> launched_at = launches_in_window(model, gpu.collected.api_calls);
  for (GpuActivity& activity : gpu.collected.activities) {
    if (!activity_stamped_in_window(model, activity, launched_at)) continue;
    if (activity.end_ns < model.window_begin_ns) {  // the warm-up's work, done before the window
      ++model.stats.events_before_window;
      continue;
    }
    out.activities.push_back(activity);
  }
  out.activities.insert(out.activities.end(), spans.begin(), spans.end());
  std::stable_sort(out.activities.begin(), out.activities.end(), [](const GpuActivity& a, const GpuActivity& b) {
    if (a.device != b.device) return a.device < b.device;
    if (a.stream != b.stream) return a.stream < b.stream;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  // GPU work takes the External id of the call that launched it.
  std::unordered_map<uint32_t, uint64_t> external = std::move(gpu.collected.external_ids);
  const RangeTable& r = model.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.correlation[i] != 0 && r.external_id[i] != 0) external[r.correlation[i]] = r.external_id[i];
  }
  out.external_ids.reserve(out.activities.size());
  for (const GpuActivity& activity : out.activities) {
    const auto found = external.find(activity.correlation);
    const bool linked = activity.kind != GpuActivityKind::UserAnnotation && found != external.end();
    out.external_ids.push_back(linked ? found->second : 0);
  }
}

// Each measured kernel's metric values on its activity, found by correlation id and start (what
// the capture names it by). Called once the model's strings are in place: the column names are
// added to them.
void add_kernel_metrics(TraceModel& model, KernelMetricsInput& metrics) {
  model.stats.kernel_metrics_left_out = metrics.kernels_left_out;
  model.stats.kernel_metrics_unmatched = metrics.kernels_unmatched;
  if (metrics.columns.empty()) return;
  KernelMetricsTable& out = model.gpu.kernel_metrics;
  for (std::string& column : metrics.columns) {
    out.columns.push_back(static_cast<StringId>(model.strings.size()));
    model.strings.push_back(std::move(column));
  }
  std::map<std::pair<uint32_t, int64_t>, const KernelMetricRow*> measured;
  for (const KernelMetricRow& kernel : metrics.kernels) {
    measured.emplace(std::pair(kernel.correlation, kernel.start_ns), &kernel);
  }
  const std::vector<GpuActivity>& activities = model.gpu.activities;
  out.row.assign(activities.size(), KernelMetricsTable::kNoRow);
  uint32_t rows = 0;
  for (size_t i = 0; i < activities.size(); ++i) {
    if (activities[i].kind != GpuActivityKind::Kernel) continue;
    const auto found = measured.find(std::pair(activities[i].correlation, activities[i].start_ns));
    if (found == measured.end()) continue;
    out.row[i] = rows++;
    out.values.insert(out.values.end(), found->second->values.begin(), found->second->values.end());
    measured.erase(found);
  }
  // Values whose kernel record the trace does not hold: counted, not attached.
  model.stats.kernel_metrics_unmatched += measured.size();
}

// Room for every row the capture can give each table, made once: growing the largest tables
// by doubling would copy them and touch about twice their memory.
void reserve_tables(TraceModel& model, const Capture& capture) {
  const EventKindCounts kinds = event_kind_counts(capture);
  const auto of_kind = [&](EventKind kind) { return kinds[static_cast<size_t>(kind)]; };
  model.ranges.reserve(of_kind(EventKind::RangeBegin) + capture.host.completed.size() +
                       capture.gpu.collected.api_calls.size());
  model.instants.reserve(of_kind(EventKind::Instant));
  model.counters.reserve(of_kind(EventKind::Counter));
}

}  // namespace

TraceModel build_trace(Capture capture) {
  TraceModel model;
  model.window_begin_ns = capture.window.begin_ns;
  model.window_end_ns = capture.window.end_ns;
  model.unix_offset_ns = capture.process.unix_offset_ns;
  model.pid = capture.process.pid;
  model.process_name = std::move(capture.process.name);
  CollectedEvents& collected = capture.host;
  model.stats.dropped_events = collected.dropped_events;
  model.stats.unreadable_torch_events = collected.import_losses.events;
  model.stats.unreadable_torch_fields = collected.import_losses.failed_reads;

  if (capture.arg_sets.empty()) capture.arg_sets.emplace_back();  // id 0, the empty set
  ArgSetTable arg_sets(std::move(capture.arg_sets));
  reserve_tables(model, capture);
  std::sort(collected.threads.begin(), collected.threads.end(),
            [](const ThreadEvents& a, const ThreadEvents& b) { return a.index < b.index; });
  if (capture.strings.empty()) capture.strings.emplace_back();  // id 0, the empty string
  Builder builder(model, arg_sets, capture.strings, capture.other_threads);
  for (ThreadEvents& thread : collected.threads) {
    builder.add_thread(capture, thread);
    std::vector<RawEvent>().swap(thread.events);  // release as we go: traces can be large
  }
  builder.pair_remaining();
  if (!collected.completed.empty()) builder.add_completed_ranges(std::move(collected.completed));
  if (!collected.memory.empty() || !collected.observed_tensors.empty()) {
    builder.add_memory(std::move(collected.memory), collected.observed_tensors);
  }
  GpuInput& gpu = capture.gpu;
  if (!gpu.collected.api_calls.empty()) {
    builder.add_api_calls(gpu.collected.api_calls, gpu.collected.external_ids);
  }
  builder.finish();
  add_gpu_activities(model, gpu);
  model.strings = std::move(capture.strings);
  if (model.strings.empty()) model.strings.emplace_back();  // id 0, the empty string
  add_kernel_metrics(model, gpu.kernel_metrics);
  model.arg_sets = arg_sets.take();  // last: building adds sets of its own
  return model;
}

}  // namespace perfprof
