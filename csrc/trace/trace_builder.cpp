#include "trace/trace_builder.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <unordered_map>
#include <utility>

#include "common/clock.h"

namespace perfprof {
namespace {

constexpr int64_t kOpen = INT64_MIN;

std::string read_process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "process" : name;
}

class Builder {
 public:
  explicit Builder(TraceModel& model) : model_(model) {}

  void add_thread(ThreadEvents& thread) {
    const auto track = static_cast<uint32_t>(model_.threads.size());
    model_.threads.push_back({thread.index, thread.os_tid, std::move(thread.name)});
    open_stack_.clear();
    for (const RawEvent& event : thread.events) {
      if (event.ts_ns < model_.window_begin_ns) {
        ++model_.stats.events_before_window;
        continue;
      }
      switch (event.kind) {
        case EventKind::RangeBegin: begin_range(event, track); break;
        case EventKind::RangeEnd: end_range(event, track); break;
        case EventKind::Instant: add_instant(event, track); break;
        case EventKind::Counter: add_counter(event, track); break;
      }
    }
  }

  // Pairs ends that did not close the innermost open range of their thread, then closes what
  // is still open at the window end.
  void finish() {
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
      close(it->second, event.ts_ns, track);
      open.erase(it);
    }
    for (const auto& [id, i] : open) {
      r.end_ns[i] = std::max(model_.window_end_ns, r.begin_ns[i]);
      r.flags[i] |= kRangeUnfinished;
      ++model_.stats.unfinished_ranges;
    }
    classify_nesting();
  }

 private:
  void begin_range(const RawEvent& event, uint32_t track) {
    RangeTable& r = model_.ranges;
    open_stack_.emplace_back(event.payload, r.size());
    r.begin_ns.push_back(event.ts_ns);
    r.end_ns.push_back(kOpen);
    r.name.push_back(event.name);
    r.category.push_back(event.category);
    r.args.push_back(event.args);
    r.track.push_back(track);
    r.end_track.push_back(track);
    r.id.push_back(event.payload);
    r.flags.push_back(0);
  }

  void end_range(const RawEvent& event, uint32_t track) {
    if (!open_stack_.empty() && open_stack_.back().first == event.payload) {
      close(open_stack_.back().second, event.ts_ns, track);
      open_stack_.pop_back();
    } else {
      deferred_ends_.emplace_back(event, track);
    }
  }

  void close(size_t i, int64_t end_ns, uint32_t end_track) {
    model_.ranges.end_ns[i] = end_ns;
    model_.ranges.end_track[i] = end_track;
  }

  void add_instant(const RawEvent& event, uint32_t track) {
    InstantTable& t = model_.instants;
    t.ts_ns.push_back(event.ts_ns);
    t.name.push_back(event.name);
    t.category.push_back(event.category);
    t.args.push_back(event.args);
    t.track.push_back(track);
  }

  void add_counter(const RawEvent& event, uint32_t track) {
    CounterTable& t = model_.counters;
    double value = 0;
    std::memcpy(&value, &event.payload, sizeof(value));
    t.ts_ns.push_back(event.ts_ns);
    t.name.push_back(event.name);
    t.value.push_back(value);
    t.track.push_back(track);
  }

  // Ranges are stored per track in begin order, outer range first on equal begins. A range that
  // ends on another thread, or ends after the range enclosing it, cannot be drawn as a nested
  // slice of its thread: it becomes an async slice so every exported thread slice nests.
  void classify_nesting() {
    RangeTable& r = model_.ranges;
    std::vector<int64_t> enclosing_ends;
    uint32_t current_track = UINT32_MAX;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.track[i] != current_track) {
        current_track = r.track[i];
        enclosing_ends.clear();
      }
      while (!enclosing_ends.empty() && enclosing_ends.back() <= r.begin_ns[i]) {
        enclosing_ends.pop_back();
      }
      const bool overlaps_parent = !enclosing_ends.empty() && r.end_ns[i] > enclosing_ends.back();
      if (overlaps_parent || r.end_track[i] != r.track[i]) {
        r.flags[i] |= kRangeAsync;
        ++model_.stats.async_ranges;
      } else {
        enclosing_ends.push_back(r.end_ns[i]);
      }
    }
  }

  TraceModel& model_;
  std::vector<std::pair<uint64_t, size_t>> open_stack_;  // (range id, row) of this thread
  std::vector<std::pair<RawEvent, uint32_t>> deferred_ends_;
};

}  // namespace

TraceModel build_trace(CollectedEvents collected, const CollectionWindow& window) {
  TraceModel model;
  model.window_begin_ns = window.begin_ns;
  model.window_end_ns = window.end_ns;
  model.unix_offset_ns = monotonic_to_unix_offset_ns();
  model.pid = getpid();
  model.process_name = read_process_name();
  model.strings = global_strings().snapshot();
  model.stats.dropped_events = collected.dropped_events;

  std::sort(collected.threads.begin(), collected.threads.end(),
            [](const ThreadEvents& a, const ThreadEvents& b) { return a.index < b.index; });
  Builder builder(model);
  for (ThreadEvents& thread : collected.threads) {
    builder.add_thread(thread);
    std::vector<RawEvent>().swap(thread.events);  // release as we go: traces can be large
  }
  builder.finish();
  return model;
}

}  // namespace perfprof
