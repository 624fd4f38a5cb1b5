// The summary tables (docs/formats/summaries.md) in the database: the rows analysis/ computes for
// kernel_details.csv, operator_details.csv, op_statistic.csv, api_statistic.csv,
// step_trace_time.csv and data_preprocess.csv, with the database's conventions (times in
// nanoseconds since the Unix epoch, durations in nanoseconds, names as StringIds).
#include <optional>

#include "analysis/data_preprocess.h"
#include "analysis/duration_statistics.h"
#include "analysis/kernel_details.h"
#include "analysis/operator_details.h"
#include "analysis/step_trace_time.h"
#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

template <typename Row>
struct Ref {
  Context& c;
  const Row& row;
};

using KernelRef = Ref<KernelDetail>;

// The row of the range table of the CUDA call that launched the work, if it was recorded.
std::optional<size_t> launch_call(const KernelRef& r) {
  return r.row.launch_row < 0 ? std::nullopt : std::optional<size_t>(static_cast<size_t>(r.row.launch_row));
}

// PYTORCH_API.id of a TraceModel row, NULL for none (-1).
SqlValue api_id(int64_t row) { return row < 0 ? SqlValue() : SqlValue(row); }

const Table<KernelRef> kKernelDetails{
    "KERNEL_DETAILS",
    {
        {"nameId", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.name); }},
        {"type", SqlType::Text, [](const KernelRef& r) { return SqlValue(device_work_type_name(r.row.type)); }},
        {"deviceId", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.device); }},
        {"streamId", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.stream); }},
        {"start", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.c.time(r.row.start_ns)); }},
        {"duration", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.duration_ns); }},
        {"waitTime", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.wait_ns); }},
        {"gridX", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.grid[0]); }},
        {"gridY", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.grid[1]); }},
        {"gridZ", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.grid[2]); }},
        {"blockX", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.block[0]); }},
        {"blockY", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.block[1]); }},
        {"blockZ", SqlType::Integer, [](const KernelRef& r) { return SqlValue(r.row.block[2]); }},
        {"theoreticalOccupancy", SqlType::Real,
         [](const KernelRef& r) { return r.row.occupancy_percent ? SqlValue(*r.row.occupancy_percent) : SqlValue(); }},
        {"operatorNameId", SqlType::Integer,
         [](const KernelRef& r) {
           return r.row.operator_row < 0 ? SqlValue()
                                         : SqlValue(r.c.model.ranges.name[static_cast<size_t>(r.row.operator_row)]);
         }},
        // perfprof's: the launch beside the work, so that analyses need no join by correlation id:
        // the CUDA call (CUPTI_ACTIVITY_KIND_RUNTIME/_DRIVER's row of that correlationId) and the
        // operators around it (PYTORCH_API.id), innermost and outermost; NULL when not recorded.
        {"correlationId", SqlType::Integer,
         [](const KernelRef& r) { return SqlValue(r.c.model.gpu.activities[r.row.activity].correlation); }},
        {"launchNameId", SqlType::Integer,
         [](const KernelRef& r) {
           const auto call = launch_call(r);
           return call ? SqlValue(r.c.model.ranges.name[*call]) : SqlValue();
         }},
        {"launchStart", SqlType::Integer,
         [](const KernelRef& r) {
           const auto call = launch_call(r);
           return call ? SqlValue(r.c.time(r.c.model.ranges.begin_ns[*call])) : SqlValue();
         }},
        {"launchEnd", SqlType::Integer,
         [](const KernelRef& r) {
           const auto call = launch_call(r);
           return call ? SqlValue(r.c.time(r.c.model.ranges.end_ns[*call])) : SqlValue();
         }},
        {"launchGlobalTid", SqlType::Integer,
         [](const KernelRef& r) {
           const auto call = launch_call(r);
           return call ? SqlValue(r.c.thread(r.c.model.ranges.track[*call])) : SqlValue();
         }},
        {"operatorId", SqlType::Integer, [](const KernelRef& r) { return api_id(r.row.operator_row); }},
        {"rootOperatorId", SqlType::Integer, [](const KernelRef& r) { return api_id(r.row.root_operator_row); }},
    }};

using OperatorRef = Ref<OperatorDetail>;
const Table<OperatorRef> kOperatorDetails{
    "OPERATOR_DETAILS",
    {
        {"nameId", SqlType::Integer, [](const OperatorRef& r) { return SqlValue(r.row.name); }},
        {"inputShapesId", SqlType::Integer,
         [](const OperatorRef& r) {
           return r.row.input_shapes.empty() ? SqlValue() : SqlValue(r.c.strings.id(r.row.input_shapes));
         }},
        {"count", SqlType::Integer, [](const OperatorRef& r) { return SqlValue(r.row.count); }},
        {"hostSelfDuration", SqlType::Integer, [](const OperatorRef& r) { return SqlValue(r.row.host_self_ns); }},
        {"hostTotalDuration", SqlType::Integer, [](const OperatorRef& r) { return SqlValue(r.row.host_total_ns); }},
        {"deviceSelfDuration", SqlType::Integer, [](const OperatorRef& r) { return SqlValue(r.row.device_self_ns); }},
        {"deviceTotalDuration", SqlType::Integer, [](const OperatorRef& r) { return SqlValue(r.row.device_total_ns); }},
    }};

// OP_STATISTIC (kernels by name) and API_STATISTIC (CUDA calls by name): one shape.
using StatisticsRef = Ref<DurationStatistics>;
std::vector<Column<StatisticsRef>> statistics_columns() {
  return {
      {"nameId", SqlType::Integer, [](const StatisticsRef& r) { return SqlValue(r.row.name); }},
      {"timePercent", SqlType::Real, [](const StatisticsRef& r) { return SqlValue(r.row.percent); }},
      {"totalTime", SqlType::Integer, [](const StatisticsRef& r) { return SqlValue(r.row.total_ns); }},
      {"instances", SqlType::Integer, [](const StatisticsRef& r) { return SqlValue(r.row.count); }},
      {"avg", SqlType::Real, [](const StatisticsRef& r) { return SqlValue(r.row.average_ns); }},
      {"med", SqlType::Real, [](const StatisticsRef& r) { return SqlValue(r.row.median_ns); }},
      {"min", SqlType::Integer, [](const StatisticsRef& r) { return SqlValue(r.row.min_ns); }},
      {"max", SqlType::Integer, [](const StatisticsRef& r) { return SqlValue(r.row.max_ns); }},
      {"stdDev", SqlType::Real, [](const StatisticsRef& r) { return SqlValue(r.row.stdev_ns); }},
  };
}
const Table<StatisticsRef> kOpStatistic{"OP_STATISTIC", statistics_columns()};
const Table<StatisticsRef> kApiStatistic{"API_STATISTIC", statistics_columns()};

// A step's device side (msprof's columns) and host side (perfprof's).
struct StepRow {
  const StepTraceTime& device;
  const StepHostTime& host;
};

using StepRef = Ref<StepRow>;
const Table<StepRef> kStepTraceTime{
    "STEP_TRACE_TIME",
    {
        {"step", SqlType::Text, [](const StepRef& r) { return SqlValue(std::string_view(r.row.device.step)); }},
        {"startNs", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.c.time(r.row.device.begin_ns)); }},
        {"endNs", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.c.time(r.row.device.end_ns)); }},
        {"computing", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.device.computing_ns); }},
        {"communicationNotOverlapped", SqlType::Integer,
         [](const StepRef& r) { return SqlValue(r.row.device.communication_not_overlapped_ns); }},
        {"overlapped", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.device.overlapped_ns); }},
        {"communication", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.device.communication_ns); }},
        {"free", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.device.free_ns); }},
        {"stage", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.device.stage_ns); }},
        {"bubble", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.device.bubble_ns); }},
        {"communicationNotOverlappedExcludeReceive", SqlType::Integer,
         [](const StepRef& r) { return SqlValue(r.row.device.communication_not_overlapped_exclude_receive_ns); }},
        {"preparing", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.device.preparing_ns); }},
        // perfprof's: the host's side (analysis/step_trace_time.h)
        {"hostOperators", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.host.host_operators_ns); }},
        {"hostGc", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.row.host.host_gc_ns); }},
    }};

using DataPreprocessRef = Ref<DataPreprocess>;
const Table<DataPreprocessRef> kDataPreprocess{
    "DATA_PREPROCESS",
    {
        {"step", SqlType::Text, [](const DataPreprocessRef& r) { return SqlValue(std::string_view(r.row.step)); }},
        {"count", SqlType::Integer, [](const DataPreprocessRef& r) { return SqlValue(r.row.count); }},
        {"totalTime", SqlType::Integer, [](const DataPreprocessRef& r) { return SqlValue(r.row.total_ns); }},
    }};

// Creates `table` and inserts every row of `rows`.
template <typename Row>
void write_rows(Context& c, const Table<Ref<Row>>& table, const std::vector<Row>& rows) {
  TableWriter<Ref<Row>> writer(c.db, table);
  for (const Row& row : rows) writer.insert({c, row});
}

}  // namespace

void write_summary_tables(Context& c) {
  write_rows(c, kKernelDetails, kernel_details(c.trace));
  write_rows(c, kOperatorDetails, operator_details(c.model));
  write_rows(c, kOpStatistic, kernel_statistics(c.model));
  write_rows(c, kApiStatistic, api_statistics(c.model));
  const std::vector<StepTraceTime> device = step_trace_time(c.model);
  const std::vector<StepHostTime> host = step_host_time(c.model);
  std::vector<StepRow> steps;
  for (size_t i = 0; i < device.size(); ++i) steps.push_back({device[i], host[i]});
  write_rows(c, kStepTraceTime, steps);
  write_rows(c, kDataPreprocess, data_preprocess(c.model));
}

}  // namespace perfprof::db
