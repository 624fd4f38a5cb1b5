#pragma once
// One collected trace: the single model every exporter reads. Struct of arrays, interned names.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/string_table.h"
#include "memory/memory_events.h"
#include "record/gpu_records.h"

namespace perfprof {

// `column` with its elements in the order `order` lists their indexes.
template <typename T>
void reorder(std::vector<T>& column, const std::vector<size_t>& order) {
  std::vector<T> sorted;
  sorted.reserve(column.size());
  for (size_t i : order) sorted.push_back(column[i]);
  column.swap(sorted);
}

// The track of Python garbage-collection pauses. No OS thread has this id: Linux's pid_max is
// at most 2^22.
constexpr int64_t kGcTrackTid = int64_t{1} << 30;

// The name of each schedule step's range is this prefix and the step number, as torch names it.
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";

// The category of Python calls (with_stack) and module calls (with_modules), as torch names it.
inline constexpr std::string_view kPythonFunctionCategory = "python_function";

// What a range is, for the analyses and exporters that treat kinds differently; the trace's
// categories name them as torch.profiler does ("cpu_op", "user_annotation", ...).
enum class RangeKind : uint8_t {
  Other,
  CpuOp,           // a PyTorch operator
  UserAnnotation,  // record_function, mstx ranges, ProfilerStep#N, torch's own annotations
  PythonFunction,  // a Python call or module call (with_stack, with_modules)
  Gc,              // a Python garbage-collection pause
  CudaRuntime,     // a CUDA runtime API call
  CudaDriver,      // a CUDA driver API call
};

// The kind a category names (Other for one it does not know).
RangeKind range_kind_of(std::string_view category);

struct ThreadTrack {
  uint32_t index = 0;  // recorder buffer index: stable order of first appearance
  int64_t os_tid = 0;
  std::string name;
};

enum RangeFlag : uint8_t {
  kRangeUnfinished = 1u << 0,  // still open when collection stopped: ends at the window end
  kRangeAsync = 1u << 1,       // ends on another thread, or overlaps a sibling: not a nested slice
  kRangeImported = 1u << 2,    // recorded by torch's profiler: times converted from its clock
};

// A row of RangeTable, as it is appended.
struct RangeRow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  StringId name = kEmptyString;
  StringId category = kEmptyString;
  StringId args = kEmptyString;
  uint32_t track = 0;      // index into TraceModel::threads
  uint32_t end_track = 0;  // the track its end was recorded on
  uint64_t id = 0;
  uint8_t flags = 0;
  uint32_t correlation = 0;  // CUDA API calls: CUPTI correlation id, else 0
  uint64_t external_id = 0;  // CUDA API calls: enclosing host range id, else 0
  int64_t sequence = -1;     // PyTorch operators: autograd sequence number, else -1
  RangeKind kind = RangeKind::Other;  // what `category` names (the builder sets it)
};

// Struct of arrays: one column per RangeRow field, rows appended and reordered whole.
struct RangeTable {
  std::vector<int64_t> begin_ns, end_ns;
  std::vector<StringId> name, category, args;
  std::vector<uint32_t> track, end_track;
  std::vector<uint64_t> id;
  std::vector<uint8_t> flags;
  std::vector<uint32_t> correlation;
  std::vector<uint64_t> external_id;
  std::vector<int64_t> sequence;
  std::vector<RangeKind> kind;

  size_t size() const { return begin_ns.size(); }
  size_t append(const RangeRow& row) {
    for_each_column(row, [](auto& column, const auto& value) { column.push_back(value); });
    return size() - 1;
  }
  void reserve(size_t rows) {
    for_each_column(RangeRow{}, [&](auto& column, const auto&) { column.reserve(rows); });
  }
  // Rows in the order `order` lists them.
  void reorder(const std::vector<size_t>& order) {
    for_each_column(RangeRow{}, [&](auto& column, const auto&) { perfprof::reorder(column, order); });
  }

 private:
  // The one list pairing each column with its RangeRow field.
  template <typename Visit>
  void for_each_column(const RangeRow& row, Visit&& visit) {
    visit(begin_ns, row.begin_ns);
    visit(end_ns, row.end_ns);
    visit(name, row.name);
    visit(category, row.category);
    visit(args, row.args);
    visit(track, row.track);
    visit(end_track, row.end_track);
    visit(id, row.id);
    visit(flags, row.flags);
    visit(correlation, row.correlation);
    visit(external_id, row.external_id);
    visit(sequence, row.sequence);
    visit(kind, row.kind);
  }
};

// A forward operator and the backward operator autograd ran for it, as rows of TraceModel::ranges.
struct ForwardBackwardLink {
  size_t forward = 0;
  size_t backward = 0;
};

struct InstantRow {
  int64_t ts_ns = 0;
  StringId name = kEmptyString;
  StringId category = kEmptyString;
  StringId args = kEmptyString;
  uint32_t track = 0;
};

struct InstantTable {
  std::vector<int64_t> ts_ns;
  std::vector<StringId> name, category, args;
  std::vector<uint32_t> track;

  size_t size() const { return ts_ns.size(); }
  void reserve(size_t rows) {
    ts_ns.reserve(rows);
    name.reserve(rows);
    category.reserve(rows);
    args.reserve(rows);
    track.reserve(rows);
  }
  void append(const InstantRow& row) {
    ts_ns.push_back(row.ts_ns);
    name.push_back(row.name);
    category.push_back(row.category);
    args.push_back(row.args);
    track.push_back(row.track);
  }
};

struct CounterRow {
  int64_t ts_ns = 0;
  StringId name = kEmptyString;
  double value = 0;
  uint32_t track = 0;
};

struct CounterTable {
  std::vector<int64_t> ts_ns;
  std::vector<StringId> name;
  std::vector<double> value;
  std::vector<uint32_t> track;

  size_t size() const { return ts_ns.size(); }
  void reserve(size_t rows) {
    ts_ns.reserve(rows);
    name.reserve(rows);
    value.reserve(rows);
    track.reserve(rows);
  }
  void append(const CounterRow& row) {
    ts_ns.push_back(row.ts_ns);
    name.push_back(row.name);
    value.push_back(row.value);
    track.push_back(row.track);
  }
};

struct TraceStats {
  uint64_t dropped_events = 0;         // could not be stored (out of memory)
  uint64_t unmatched_range_ends = 0;   // ends whose begin was not recorded (began before start)
  uint64_t unfinished_ranges = 0;      // begins whose end was not recorded before stop
  uint64_t async_ranges = 0;           // exported as async slices (cross-thread or overlapping)
  uint64_t events_before_window = 0;   // warm-up stragglers dropped at the window start
  uint64_t gpu_dropped_records = 0;    // CUPTI records lost (no buffer space)
  uint64_t unreadable_torch_events = 0;  // operators torch recorded that could not be read
  uint64_t unreadable_torch_fields = 0;  // reads of torch's results that failed (fields left out)

  // Every count with the name exports give it ("perfprofStats"), in a stable order.
  std::array<std::pair<const char*, uint64_t>, 8> named() const {
    return {{{"dropped_events", dropped_events},
             {"unmatched_range_ends", unmatched_range_ends},
             {"unfinished_ranges", unfinished_ranges},
             {"async_ranges", async_ranges},
             {"events_before_window", events_before_window},
             {"gpu_dropped_records", gpu_dropped_records},
             {"unreadable_torch_events", unreadable_torch_events},
             {"unreadable_torch_fields", unreadable_torch_fields}}};
  }
};

struct GpuTrace {
  std::vector<GpuActivity> activities;  // by device, stream, start
  std::vector<uint64_t> external_ids;   // per activity: host range id of its launch, or 0
  std::vector<GpuDevice> devices;
  bool collected = false;               // GPU collection ran for this trace
};

// Memory profiling's events in the window, and the track each allocator event happened on.
struct MemoryTrace {
  memory::MemoryEvents events;
  std::vector<uint32_t> allocation_track;  // per events.allocations: index into TraceModel::threads
};

struct TraceModel {
  int64_t window_begin_ns = 0;  // now_ns() clock
  int64_t window_end_ns = 0;
  int64_t unix_offset_ns = 0;   // add to a now_ns() value to get Unix time
  int64_t pid = 0;
  std::string process_name;
  std::vector<std::string> strings;  // indexed by StringId
  std::vector<ThreadTrack> threads;
  RangeTable ranges;  // grouped by track, in begin order within a track
  std::vector<ForwardBackwardLink> forward_backward;  // as torch.profiler links them, by backward end
  InstantTable instants;
  CounterTable counters;
  GpuTrace gpu;
  MemoryTrace memory;
  TraceStats stats;

  const std::string& str(StringId id) const { return strings[id]; }
};

}  // namespace perfprof
