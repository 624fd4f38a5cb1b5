#pragma once
// One collected trace: the single model every exporter reads. Struct of arrays, interned names.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/args.h"
#include "common/string_table.h"
#include "memory/memory_events.h"
#include "record/counter_metric.h"
#include "record/gpu_records.h"
#include "record/range_kind.h"

namespace perfprof {

// `column` with its elements in the order `order` lists their indexes.
template <typename T>
void reorder(std::vector<T>& column, const std::vector<size_t>& order) {
  std::vector<T> sorted;
  sorted.reserve(column.size());
  for (size_t i : order) sorted.push_back(column[i]);
  column.swap(sorted);
}

struct ThreadTrack {
  uint32_t index = 0;  // recorder buffer index: stable order of first appearance
  int64_t os_tid = 0;
  std::string name;
};

enum RangeFlag : uint8_t {
  kRangeUnfinished = 1u << 0,  // still open when collection stopped: ends at the window end
  kRangeAsync = 1u << 1,       // ends on another thread, or overlaps a sibling: not a nested slice
  kRangeImported = 1u << 2,    // recorded by torch's profiler: times converted from its clock
  kRangeStepTail = 1u << 3,    // a ProfilerStep#N range the profiler stopped in: the tail, not a step
};

// A row of RangeTable, as it is appended.
struct RangeRow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  StringId name = kEmptyString;
  ArgSetId args = kNoArgs;
  uint32_t track = 0;      // index into TraceModel::threads
  uint32_t end_track = 0;  // the track its end was recorded on
  uint64_t id = 0;
  uint8_t flags = 0;
  uint32_t correlation = 0;  // CUDA API calls: CUPTI correlation id, else 0
  uint64_t external_id = 0;  // CUDA API calls: enclosing host range id, else 0
  int64_t sequence = -1;     // PyTorch operators: autograd sequence number, else -1
  RangeKind kind = RangeKind::Other;  // what it is, as its recorder said
};

// Struct of arrays: one column per RangeRow field, rows appended and reordered whole.
// Row operations of a struct-of-arrays table. `Table` lists each column with its `Row` field
// once, in `for_each_column(row, visit)`; rows are appended, reserved and reordered whole
// through that one list, so no column can be left behind.
template <typename Table, typename Row>
struct ColumnTable {
  size_t append(const Row& row) {
    table().for_each_column(row, [](auto& column, const auto& value) { column.push_back(value); });
    return table().size() - 1;
  }
  void reserve(size_t rows) {
    table().for_each_column(Row{}, [&](auto& column, const auto&) { column.reserve(rows); });
  }
  // Rows in the order `order` lists them.
  void reorder(const std::vector<size_t>& order) {
    table().for_each_column(Row{}, [&](auto& column, const auto&) { perfprof::reorder(column, order); });
  }

 private:
  Table& table() { return static_cast<Table&>(*this); }
};

struct RangeTable : ColumnTable<RangeTable, RangeRow> {
  std::vector<int64_t> begin_ns, end_ns;
  std::vector<StringId> name;
  std::vector<ArgSetId> args;
  std::vector<uint32_t> track, end_track;
  std::vector<uint64_t> id;
  std::vector<uint8_t> flags;
  std::vector<uint32_t> correlation;
  std::vector<uint64_t> external_id;
  std::vector<int64_t> sequence;
  std::vector<RangeKind> kind;

  size_t size() const { return begin_ns.size(); }

  template <typename Visit>
  void for_each_column(const RangeRow& row, Visit&& visit) {
    visit(begin_ns, row.begin_ns);
    visit(end_ns, row.end_ns);
    visit(name, row.name);
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
  RangeKind kind = RangeKind::Other;
  ArgSetId args = kNoArgs;
  uint32_t track = 0;
};

struct InstantTable : ColumnTable<InstantTable, InstantRow> {
  std::vector<int64_t> ts_ns;
  std::vector<StringId> name;
  std::vector<RangeKind> kind;
  std::vector<ArgSetId> args;
  std::vector<uint32_t> track;

  size_t size() const { return ts_ns.size(); }

  template <typename Visit>
  void for_each_column(const InstantRow& row, Visit&& visit) {
    visit(ts_ns, row.ts_ns);
    visit(name, row.name);
    visit(kind, row.kind);
    visit(args, row.args);
    visit(track, row.track);
  }
};

// A counter sample. A user's counter (metric User) is named by `name`; a sampler's by its
// metric, `name` being the instance ("cpu3", "GPU 0").
struct CounterRow {
  int64_t ts_ns = 0;
  StringId name = kEmptyString;
  double value = 0;
  uint32_t track = 0;
  CounterMetric metric = CounterMetric::User;
};

struct CounterTable : ColumnTable<CounterTable, CounterRow> {
  std::vector<int64_t> ts_ns;
  std::vector<StringId> name;
  std::vector<double> value;
  std::vector<uint32_t> track;
  std::vector<CounterMetric> metric;

  size_t size() const { return ts_ns.size(); }

  template <typename Visit>
  void for_each_column(const CounterRow& row, Visit&& visit) {
    visit(ts_ns, row.ts_ns);
    visit(name, row.name);
    visit(value, row.value);
    visit(track, row.track);
    visit(metric, row.metric);
  }
};

struct TraceStats {
  uint64_t dropped_events = 0;         // could not be stored (out of memory)
  uint64_t unmatched_range_ends = 0;   // ends whose begin was not recorded (began before start)
  uint64_t unfinished_ranges = 0;      // begins whose end was not recorded before stop
  uint64_t async_ranges = 0;           // exported as async slices (cross-thread or overlapping)
  uint64_t events_before_window = 0;   // warm-up stragglers dropped at the window start
  uint64_t gpu_dropped_records = 0;    // CUPTI records lost (no buffer space)
  // GPU activity and CUDA API records stamped 0 (CUPTI had no device memory to time them),
  // ending before they start, or starting after the window ended (another clock): dropped.
  uint64_t gpu_records_outside_window = 0;
  uint64_t unreadable_torch_events = 0;  // operators torch recorded that could not be read
  uint64_t unreadable_torch_fields = 0;  // reads of torch's results that failed (fields left out)
  uint64_t kernel_metrics_left_out = 0;   // kernels launched while measured, past capacity
  uint64_t kernel_metrics_unmatched = 0;  // measured kernels whose values could not be attached

  // Every count with the name exports give it ("perfprofStats"), in a stable order.
  std::array<std::pair<const char*, uint64_t>, 11> named() const {
    return {{{"dropped_events", dropped_events},
             {"unmatched_range_ends", unmatched_range_ends},
             {"unfinished_ranges", unfinished_ranges},
             {"async_ranges", async_ranges},
             {"events_before_window", events_before_window},
             {"gpu_dropped_records", gpu_dropped_records},
             {"gpu_records_outside_window", gpu_records_outside_window},
             {"unreadable_torch_events", unreadable_torch_events},
             {"unreadable_torch_fields", unreadable_torch_fields},
             {"kernel_metrics_left_out", kernel_metrics_left_out},
             {"kernel_metrics_unmatched", kernel_metrics_unmatched}}};
  }
};

// Per-kernel hardware metrics (ExperimentalConfig.gpu_metrics / l2_cache): a row of values for
// each measured kernel, one value per column.
struct KernelMetricsTable {
  static constexpr uint32_t kNoRow = UINT32_MAX;
  std::vector<StringId> columns;  // export names, e.g. "SM Throughput (%)"
  std::vector<uint32_t> row;      // per GPU activity: its row, or kNoRow (none measured)
  std::vector<double> values;     // row-major, columns.size() per row; NaN: not evaluated

  // The values of GPU activity `activity` (columns.size() of them), or nullptr when it has none.
  const double* of(size_t activity) const {
    return activity < row.size() && row[activity] != kNoRow ? values.data() + size_t{row[activity]} * columns.size()
                                                            : nullptr;
  }
};

struct GpuTrace {
  std::vector<GpuActivity> activities;  // by device, stream, start
  std::vector<uint64_t> external_ids;   // per activity: host range id of its launch, or 0
  std::vector<GpuDevice> devices;
  KernelMetricsTable kernel_metrics;
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
  std::vector<ArgSet> arg_sets;      // indexed by ArgSetId: the typed args of ranges and instants
  std::vector<ThreadTrack> threads;
  RangeTable ranges;  // grouped by track, in begin order within a track
  std::vector<ForwardBackwardLink> forward_backward;  // as torch.profiler links them, by backward end
  InstantTable instants;
  CounterTable counters;
  GpuTrace gpu;
  MemoryTrace memory;
  TraceStats stats;

  const std::string& str(StringId id) const { return strings[id]; }
  const ArgSet& args(ArgSetId id) const { return arg_sets[index_of(id)]; }
};

}  // namespace perfprof
