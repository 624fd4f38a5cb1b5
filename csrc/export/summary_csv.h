#pragma once
// The summary tables as CSV files (docs/formats/summaries.md): each a thin writer over the rows
// analysis/ computes once, so a CSV row and the database's table hold the same numbers.
//   kernel_details.csv   one row per kernel, copy or memset (analysis/kernel_details.h)
//   operator_details.csv PyTorch operators per name and input shapes (analysis/operator_details.h)
//   op_statistic.csv     kernels per name, nsys cuda_gpu_kern_sum columns (analysis/duration_statistics.h)
//   api_statistic.csv    CUDA API calls per name, nsys cuda_api_sum columns
//   step_trace_time.csv  each step's device time by activity (analysis/step_trace_time.h)
//   data_preprocess.csv  each step's DataLoader fetch time (analysis/data_preprocess.h)
#include <array>
#include <string>
#include <string_view>

#include "analysis/analysed_trace.h"

namespace perfprof {

enum class SummaryTable { KernelDetails, OperatorDetails, OpStatistic, ApiStatistic, StepTraceTime, DataPreprocess };

inline constexpr std::array<SummaryTable, 6> kSummaryTables = {
    SummaryTable::KernelDetails, SummaryTable::OperatorDetails, SummaryTable::OpStatistic,
    SummaryTable::ApiStatistic,  SummaryTable::StepTraceTime,   SummaryTable::DataPreprocess};

// "kernel_details.csv", ...
std::string_view summary_file_name(SummaryTable table);

// Whether the trace has what the table summarises: device work (kernel_details), kernels
// (op_statistic), CUDA API calls (api_statistic), operators (operator_details), steps
// (step_trace_time), steps and DataLoader fetches (data_preprocess). A table without is not
// written.
bool has_summary(const AnalysedTrace& trace, SummaryTable table);

void write_summary_csv(const AnalysedTrace& trace, SummaryTable table, const std::string& path);

}  // namespace perfprof
