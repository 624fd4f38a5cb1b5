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

template <size_t N>
std::string dims_text(const std::array<uint32_t, N>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// kernel_details.csv's columns, then one per hardware metric the trace measured (kernel_metrics).
std::string kernel_details_header(const TraceModel& model) {
  std::string header =
      "Name,Type,Device,Stream,Start Time(us),Duration(us),Wait Time(us),Grid,Block,"
      "Theoretical Occupancy(%),Operator";
  for (const StringId column : model.gpu.kernel_metrics.columns) {
    header += ',';
    header += csv_field(model.str(column));
  }
  return header;
}

// A cell per kernel_metrics column for GPU activity `activity`: its value, shortest round-trip,
// or empty for work that was not measured (copies, memsets...) and columns not evaluated (NaN).
void append_kernel_metrics(std::string& text, const TraceModel& model, size_t activity) {
  const KernelMetricsTable& table = model.gpu.kernel_metrics;
  const double* values =
      model.gpu.activities[activity].kind == GpuActivityKind::Kernel ? table.of(activity) : nullptr;
  for (size_t column = 0; column < table.columns.size(); ++column) {
    text += ',';
    if (values != nullptr && std::isfinite(values[column])) {
      fmt::format_to(std::back_inserter(text), "{}", values[column]);
    }
  }
}

void write_kernel_details(const AnalysedTrace& trace, const std::string& path) {
  const TraceModel& model = trace.model();
  CsvFile csv(path, kernel_details_header(model));
  for (const KernelDetail& row : kernel_details(trace)) {
    std::string& text = csv.text();
    text += csv_field(model.str(row.name));
    fmt::format_to(std::back_inserter(text), ",{},{},{},", device_work_type_name(row.type), row.device, row.stream);
    append_us(text, row.start_ns + model.unix_offset_ns);
    text += ',';
    append_us(text, row.duration_ns);
    text += ',';
    append_us(text, row.wait_ns);
    text += ',';
    if (model.gpu.activities[row.activity].kind == GpuActivityKind::Kernel) {
      fmt::format_to(std::back_inserter(text), "{},{},", csv_field(dims_text(row.grid)), csv_field(dims_text(row.block)));
    } else {
      text += ",,";
    }
    if (row.occupancy_percent) fmt::format_to(std::back_inserter(text), "{:.2f}", *row.occupancy_percent);
    text += ',';
    if (row.operator_row >= 0) text += csv_field(model.str(model.ranges.name[static_cast<size_t>(row.operator_row)]));
    append_kernel_metrics(text, model, row.activity);
    csv.end_row();
  }
  csv.commit();
}

void write_operator_details(const TraceModel& model, const std::string& path) {
  CsvFile csv(path,
              "Name,Input Shapes,Count,Host Self Duration(us),Host Total Duration(us),"
              "Device Self Duration(us),Device Total Duration(us)");
  for (const OperatorDetail& row : operator_details(model)) {
    std::string& text = csv.text();
    fmt::format_to(std::back_inserter(text), "{},{},{}", csv_field(model.str(row.name)), csv_field(row.input_shapes), row.count);
    for (int64_t ns : {row.host_self_ns, row.host_total_ns, row.device_self_ns, row.device_total_ns}) {
      text += ',';
      append_us(text, ns);
    }
    csv.end_row();
  }
  csv.commit();
}

// nsys's report columns: times in nanoseconds, averages to one decimal.
void write_duration_statistics(const TraceModel& model, const std::vector<DurationStatistics>& rows,
                               std::string_view count_column, const std::string& path) {
  CsvFile csv(path, fmt::format("Time (%),Total Time (ns),{},Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
                                count_column));
  for (const DurationStatistics& row : rows) {
    fmt::format_to(std::back_inserter(csv.text()), "{:.1f},{},{},{:.1f},{:.1f},{},{},{:.1f},{}", row.percent,
                   row.total_ns, row.count, row.average_ns, row.median_ns, row.min_ns, row.max_ns, row.stdev_ns,
                   csv_field(model.str(row.name)));
    csv.end_row();
  }
  csv.commit();
}

// msprof-analyze's columns, in microseconds.
void write_step_trace_time(const TraceModel& model, const std::string& path) {
  CsvFile csv(path,
              "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
              "Communication(Not Overlapped and Exclude Receive),Preparing");
  for (const StepTraceTime& row : step_trace_time(model)) {
    std::string& text = csv.text();
    text += csv_field(row.step);
    for (int64_t ns : {row.computing_ns, row.communication_not_overlapped_ns, row.overlapped_ns, row.communication_ns,
                       row.free_ns, row.stage_ns, row.bubble_ns, row.communication_not_overlapped_exclude_receive_ns,
                       row.preparing_ns}) {
      text += ',';
      append_us(text, ns);
    }
    csv.end_row();
  }
  csv.commit();
}

void write_data_preprocess(const TraceModel& model, const std::string& path) {
  CsvFile csv(path, "Step,Count,Total Time(us)");
  for (const DataPreprocess& row : data_preprocess(model)) {
    fmt::format_to(std::back_inserter(csv.text()), "{},{},", csv_field(row.step), row.count);
    append_us(csv.text(), row.total_ns);
    csv.end_row();
  }
  csv.commit();
}

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
    case SummaryTable::OperatorDetails: return write_operator_details(model, path);
    case SummaryTable::OpStatistic: return write_duration_statistics(model, kernel_statistics(model), "Instances", path);
    case SummaryTable::ApiStatistic: return write_duration_statistics(model, api_statistics(model), "Num Calls", path);
    case SummaryTable::StepTraceTime: return write_step_trace_time(model, path);
    case SummaryTable::DataPreprocess: return write_data_preprocess(model, path);
  }
}

}  // namespace perfprof
