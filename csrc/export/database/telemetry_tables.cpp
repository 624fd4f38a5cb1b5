// HOST_CPU_USAGE, HOST_MEM_USAGE, HOST_DISK_USAGE, HOST_NETWORK_USAGE, GPU_TELEMETRY, GPU_PCIE,
// GPU_NVLINK: the samplers' counters, one row per sample time and instance, one column per metric.
#include <array>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

inline constexpr size_t kMaxValueColumns = 6;

// A telemetry table: which metrics fill which of its value columns, and the column the instance
// goes to (empty: the metrics are of one instance per time, as a host's memory, and rows are
// keyed by time alone). Several metrics may fill one column (a CPU's usage and the process's).
struct TelemetryTableSpec {
  std::string_view name;
  std::string_view instance_column;
  std::vector<std::string_view> value_columns;          // at most kMaxValueColumns
  std::vector<std::pair<CounterMetric, size_t>> metrics;  // metric -> index into value_columns
};

const std::vector<TelemetryTableSpec>& telemetry_tables() {
  using M = CounterMetric;
  static const std::vector<TelemetryTableSpec> tables = {
      {"HOST_CPU_USAGE", "cpu", {"usage"}, {{M::HostCpuUsage, 0}, {M::ProcessCpuUsage, 0}}},
      {"HOST_MEM_USAGE", "", {"usedBytes", "availableBytes", "processRssBytes"},
       {{M::HostMemoryUsed, 0}, {M::HostMemoryAvailable, 1}, {M::ProcessMemoryRss, 2}}},
      {"HOST_DISK_USAGE", "device", {"readBytesPerSec", "writeBytesPerSec"}, {{M::DiskRead, 0}, {M::DiskWrite, 1}}},
      {"HOST_NETWORK_USAGE", "interface", {"receiveBytesPerSec", "transmitBytesPerSec"},
       {{M::NetworkReceive, 0}, {M::NetworkTransmit, 1}}},
      {"GPU_TELEMETRY", "gpu",
       {"utilization", "memoryUtilization", "memoryUsedBytes", "powerWatts", "smClockMHz", "temperatureC"},
       {{M::GpuUtilization, 0}, {M::GpuMemoryUtilization, 1}, {M::GpuMemoryUsed, 2}, {M::GpuPower, 3},
        {M::GpuSmClock, 4}, {M::GpuTemperature, 5}}},
      {"GPU_PCIE", "gpu", {"receiveBytesPerSec", "transmitBytesPerSec"}, {{M::PcieReceive, 0}, {M::PcieTransmit, 1}}},
      {"GPU_NVLINK", "link", {"receiveBytesPerSec", "transmitBytesPerSec"},
       {{M::NvlinkReceive, 0}, {M::NvlinkTransmit, 1}}},
  };
  return tables;
}

struct TelemetryRow {
  int64_t timestamp = 0;
  std::string_view instance;
  std::array<std::optional<double>, kMaxValueColumns> values;
};

SqlValue timestamp_value(const TelemetryRow& row) { return SqlValue(row.timestamp); }
SqlValue instance_value(const TelemetryRow& row) { return SqlValue(row.instance); }

template <size_t I>
SqlValue metric_value(const TelemetryRow& row) {
  return row.values[I] ? SqlValue(*row.values[I]) : SqlValue();
}

constexpr std::array<SqlValue (*)(const TelemetryRow&), kMaxValueColumns> kValueReaders = {
    metric_value<0>, metric_value<1>, metric_value<2>, metric_value<3>, metric_value<4>, metric_value<5>};

Table<TelemetryRow> table_of(const TelemetryTableSpec& spec) {
  Table<TelemetryRow> table{spec.name, {{"timestamp", SqlType::Integer, timestamp_value}}};
  if (!spec.instance_column.empty()) table.columns.push_back({spec.instance_column, SqlType::Text, instance_value});
  for (size_t i = 0; i < spec.value_columns.size(); ++i) {
    table.columns.push_back({spec.value_columns[i], SqlType::Real, kValueReaders[i]});
  }
  return table;
}

// The column `metric` fills in `spec`, if the table takes it.
std::optional<size_t> column_of(const TelemetryTableSpec& spec, CounterMetric metric) {
  for (const auto& [taken, column] : spec.metrics) {
    if (taken == metric) return column;
  }
  return std::nullopt;
}

void write_telemetry_table(Context& c, const TelemetryTableSpec& spec) {
  const CounterTable& counters = c.model.counters;
  const bool by_instance = !spec.instance_column.empty();
  std::map<std::pair<int64_t, std::string_view>, TelemetryRow> rows;  // in time, then instance, order
  for (size_t i = 0; i < counters.size(); ++i) {
    const std::optional<size_t> column = column_of(spec, counters.metric[i]);
    if (!column) continue;
    const std::string_view instance = by_instance ? std::string_view(c.model.str(counters.name[i])) : std::string_view();
    TelemetryRow& row = rows[{counters.ts_ns[i], instance}];
    row.timestamp = c.time(counters.ts_ns[i]);
    row.instance = instance;
    row.values[*column] = counters.value[i];
  }
  const Table<TelemetryRow> table = table_of(spec);
  TableWriter<TelemetryRow> writer(c.db, table);
  for (const auto& [key, row] : rows) writer.insert(row);
}

}  // namespace

void write_telemetry_tables(Context& c) {
  for (const TelemetryTableSpec& spec : telemetry_tables()) write_telemetry_table(c, spec);
}

}  // namespace perfprof::db
