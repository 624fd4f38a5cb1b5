#include "export/summary_csv.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/data_preprocess.h"
#include "analysis/duration_statistics.h"
#include "analysis/kernel_details.h"
#include "analysis/op_tree.h"
#include "analysis/operator_details.h"
#include "analysis/step_trace_time.h"
#include "export/csv.h"
#include "export/output_file.h"

namespace perfprof {
namespace {

// Rows are appended to `text` and written out a block at a time.
class CsvFile {
 public:
  CsvFile(const std::string& path, std::string_view header) : file_(path), text_(header) { text_ += '\n'; }
  std::string& text() { return text_; }
  void end_row() {
    text_ += '\n';
    file_.write_if_large(text_);
  }
  void commit() {
    file_.write(text_);
    file_.commit();
  }

 private:
  OutputFile file_;
  std::string text_;
};

// What a cell is written from: a row of an analysis, and the model its ids refer to.
template <typename Row>
struct Cell {
  const TraceModel& model;
  const Row& row;
};

// One column of a summary CSV: its header and how a row's cell is written. Each table is one
// list of these, so the header and the rows are made from the same list, as the database's
// tables are (database/table.h).
template <typename Row>
struct CsvColumn {
  std::string_view header;
  void (*append)(std::string& text, const Cell<Row>& cell);
};

template <typename Row>
using CsvColumns = std::vector<CsvColumn<Row>>;

template <typename Row>
std::string header_of(const CsvColumns<Row>& columns) {
  std::string header;
  for (const CsvColumn<Row>& column : columns) {
    if (!header.empty()) header += ',';
    header += column.header;
  }
  return header;
}

template <typename Row>
void append_cells(std::string& text, const CsvColumns<Row>& columns, const Cell<Row>& cell) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i != 0) text += ',';
    columns[i].append(text, cell);
  }
}

template <typename Row>
void write_rows(const TraceModel& model, const CsvColumns<Row>& columns, const std::vector<Row>& rows,
                const std::string& path) {
  CsvFile csv(path, header_of(columns));
  for (const Row& row : rows) {
    append_cells(csv.text(), columns, Cell<Row>{model, row});
    csv.end_row();
  }
  csv.commit();
}

void append_name(std::string& text, const TraceModel& model, StringId name) { text += csv_field(model.str(name)); }

template <typename Number>
void append_number(std::string& text, Number value) {
  fmt::format_to(std::back_inserter(text), "{}", value);
}

// Averages, medians and deviations to one decimal, as nsys's reports give them.
void append_tenths(std::string& text, double value) { fmt::format_to(std::back_inserter(text), "{:.1f}", value); }

template <size_t N>
void append_dims(std::string& text, const std::array<uint32_t, N>& dims) {
  text += csv_field(fmt::format("[{}]", fmt::join(dims, ", ")));
}

bool is_kernel(const Cell<KernelDetail>& c) {
  return c.model.gpu.activities[c.row.activity].kind == GpuActivityKind::Kernel;
}

// kernel_details.csv's own columns; one per hardware metric the trace measured follows them.
const CsvColumns<KernelDetail> kKernelDetails{
    {"Name", [](std::string& t, const Cell<KernelDetail>& c) { append_name(t, c.model, c.row.name); }},
    {"Type", [](std::string& t, const Cell<KernelDetail>& c) { t += device_work_type_name(c.row.type); }},
    {"Device", [](std::string& t, const Cell<KernelDetail>& c) { append_number(t, c.row.device); }},
    {"Stream", [](std::string& t, const Cell<KernelDetail>& c) { append_number(t, c.row.stream); }},
    {"Start Time(us)",
     [](std::string& t, const Cell<KernelDetail>& c) { append_us(t, c.row.start_ns + c.model.unix_offset_ns); }},
    {"Duration(us)", [](std::string& t, const Cell<KernelDetail>& c) { append_us(t, c.row.duration_ns); }},
    {"Wait Time(us)", [](std::string& t, const Cell<KernelDetail>& c) { append_us(t, c.row.wait_ns); }},
    {"Grid", [](std::string& t, const Cell<KernelDetail>& c) { if (is_kernel(c)) append_dims(t, c.row.grid); }},
    {"Block", [](std::string& t, const Cell<KernelDetail>& c) { if (is_kernel(c)) append_dims(t, c.row.block); }},
    {"Theoretical Occupancy(%)",
     [](std::string& t, const Cell<KernelDetail>& c) {
       if (c.row.occupancy_percent) fmt::format_to(std::back_inserter(t), "{:.2f}", *c.row.occupancy_percent);
     }},
    {"Operator",
     [](std::string& t, const Cell<KernelDetail>& c) {
       if (c.row.operator_row >= 0) append_name(t, c.model, c.model.ranges.name[static_cast<size_t>(c.row.operator_row)]);
     }},
};

// A cell per kernel_metrics column for GPU activity `activity`: its value, shortest round-trip,
// or empty for work that was not measured (copies, memsets...) and columns not evaluated (NaN).
void append_kernel_metrics(std::string& text, const Cell<KernelDetail>& c) {
  const KernelMetricsTable& table = c.model.gpu.kernel_metrics;
  const double* values = is_kernel(c) ? table.of(c.row.activity) : nullptr;
  for (size_t column = 0; column < table.columns.size(); ++column) {
    text += ',';
    if (values != nullptr && std::isfinite(values[column])) append_number(text, values[column]);
  }
}

void write_kernel_details(const AnalysedTrace& trace, const std::string& path) {
  const TraceModel& model = trace.model();
  std::string header = header_of(kKernelDetails);
  for (const StringId column : model.gpu.kernel_metrics.columns) header += ',' + csv_field(model.str(column));
  CsvFile csv(path, header);
  for (const KernelDetail& row : kernel_details(trace)) {
    const Cell<KernelDetail> cell{model, row};
    append_cells(csv.text(), kKernelDetails, cell);
    append_kernel_metrics(csv.text(), cell);
    csv.end_row();
  }
  csv.commit();
}

const CsvColumns<OperatorDetail> kOperatorDetails{
    {"Name", [](std::string& t, const Cell<OperatorDetail>& c) { append_name(t, c.model, c.row.name); }},
    {"Input Shapes", [](std::string& t, const Cell<OperatorDetail>& c) { t += csv_field(c.row.input_shapes); }},
    {"Count", [](std::string& t, const Cell<OperatorDetail>& c) { append_number(t, c.row.count); }},
    {"Host Self Duration(us)", [](std::string& t, const Cell<OperatorDetail>& c) { append_us(t, c.row.host_self_ns); }},
    {"Host Total Duration(us)", [](std::string& t, const Cell<OperatorDetail>& c) { append_us(t, c.row.host_total_ns); }},
    {"Device Self Duration(us)",
     [](std::string& t, const Cell<OperatorDetail>& c) { append_us(t, c.row.device_self_ns); }},
    {"Device Total Duration(us)",
     [](std::string& t, const Cell<OperatorDetail>& c) { append_us(t, c.row.device_total_ns); }},
};

// nsys's report columns (cuda_gpu_kern_sum, cuda_api_sum): times in nanoseconds, its count
// column named as each report names it.
CsvColumns<DurationStatistics> duration_statistics_columns(std::string_view count_header) {
  using C = Cell<DurationStatistics>;
  return {
      {"Time (%)", [](std::string& t, const C& c) { append_tenths(t, c.row.percent); }},
      {"Total Time (ns)", [](std::string& t, const C& c) { append_number(t, c.row.total_ns); }},
      {count_header, [](std::string& t, const C& c) { append_number(t, c.row.count); }},
      {"Avg (ns)", [](std::string& t, const C& c) { append_tenths(t, c.row.average_ns); }},
      {"Med (ns)", [](std::string& t, const C& c) { append_tenths(t, c.row.median_ns); }},
      {"Min (ns)", [](std::string& t, const C& c) { append_number(t, c.row.min_ns); }},
      {"Max (ns)", [](std::string& t, const C& c) { append_number(t, c.row.max_ns); }},
      {"StdDev (ns)", [](std::string& t, const C& c) { append_tenths(t, c.row.stdev_ns); }},
      {"Name", [](std::string& t, const C& c) { append_name(t, c.model, c.row.name); }},
  };
}
const CsvColumns<DurationStatistics> kOpStatistic = duration_statistics_columns("Instances");
const CsvColumns<DurationStatistics> kApiStatistic = duration_statistics_columns("Num Calls");

// msprof-analyze's columns, in microseconds.
const CsvColumns<StepTraceTime> kStepTraceTime{
    {"Step", [](std::string& t, const Cell<StepTraceTime>& c) { t += csv_field(c.row.step); }},
    {"Computing", [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.computing_ns); }},
    {"Communication(Not Overlapped)",
     [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.communication_not_overlapped_ns); }},
    {"Overlapped", [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.overlapped_ns); }},
    {"Communication", [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.communication_ns); }},
    {"Free", [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.free_ns); }},
    {"Stage", [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.stage_ns); }},
    {"Bubble", [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.bubble_ns); }},
    {"Communication(Not Overlapped and Exclude Receive)",
     [](std::string& t, const Cell<StepTraceTime>& c) {
       append_us(t, c.row.communication_not_overlapped_exclude_receive_ns);
     }},
    {"Preparing", [](std::string& t, const Cell<StepTraceTime>& c) { append_us(t, c.row.preparing_ns); }},
};

const CsvColumns<DataPreprocess> kDataPreprocess{
    {"Step", [](std::string& t, const Cell<DataPreprocess>& c) { t += csv_field(c.row.step); }},
    {"Count", [](std::string& t, const Cell<DataPreprocess>& c) { append_number(t, c.row.count); }},
    {"Total Time(us)", [](std::string& t, const Cell<DataPreprocess>& c) { append_us(t, c.row.total_ns); }},
};

bool has_range_of_kind(const TraceModel& model, std::initializer_list<RangeKind> kinds) {
  return std::any_of(model.ranges.kind.begin(), model.ranges.kind.end(),
                     [&](RangeKind kind) { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); });
}

bool has_activity(const TraceModel& model, bool (*wanted)(GpuActivityKind)) {
  return std::any_of(model.gpu.activities.begin(), model.gpu.activities.end(),
                     [&](const GpuActivity& a) { return wanted(a.kind); });
}

}  // namespace

std::string_view summary_file_name(SummaryTable table) {
  switch (table) {
    case SummaryTable::KernelDetails: return "kernel_details.csv";
    case SummaryTable::OperatorDetails: return "operator_details.csv";
    case SummaryTable::OpStatistic: return "op_statistic.csv";
    case SummaryTable::ApiStatistic: return "api_statistic.csv";
    case SummaryTable::StepTraceTime: return "step_trace_time.csv";
    case SummaryTable::DataPreprocess: return "data_preprocess.csv";
  }
  return "";
}

bool has_summary(const AnalysedTrace& trace, SummaryTable table) {
  const TraceModel& model = trace.model();
  switch (table) {
    case SummaryTable::KernelDetails: return has_activity(model, is_device_work);
    case SummaryTable::OpStatistic:
      return has_activity(model, [](GpuActivityKind kind) { return kind == GpuActivityKind::Kernel; });
    case SummaryTable::ApiStatistic: return has_range_of_kind(model, {RangeKind::CudaRuntime, RangeKind::CudaDriver});
    case SummaryTable::OperatorDetails: return has_range_of_kind(model, {RangeKind::CpuOp});
    case SummaryTable::StepTraceTime: return has_range_of_kind(model, {RangeKind::Step});
    case SummaryTable::DataPreprocess:
      return has_range_of_kind(model, {RangeKind::Step}) && has_data_loader_fetches(model);
  }
  return false;
}

void write_summary_csv(const AnalysedTrace& trace, SummaryTable table, const std::string& path) {
  const TraceModel& model = trace.model();
  switch (table) {
    case SummaryTable::KernelDetails: return write_kernel_details(trace, path);
    case SummaryTable::OperatorDetails: return write_rows(model, kOperatorDetails, operator_details(model), path);
    case SummaryTable::OpStatistic: return write_rows(model, kOpStatistic, kernel_statistics(model), path);
    case SummaryTable::ApiStatistic: return write_rows(model, kApiStatistic, api_statistics(model), path);
    case SummaryTable::StepTraceTime: return write_rows(model, kStepTraceTime, step_trace_time(model), path);
    case SummaryTable::DataPreprocess: return write_rows(model, kDataPreprocess, data_preprocess(model), path);
  }
}

}  // namespace perfprof
