#pragma once
// The formats perfprof writes, each an Exporter (export/exporter.h) over the format's writer.
#include <string>
#include <utility>

#include "export/chrome_trace.h"
#include "export/database/context.h"
#include "export/exporter.h"
#include "export/folded_stacks.h"
#include "export/summary_csv.h"
#include "memory/memory_events.h"

namespace perfprof {

// Chrome trace event JSON (.json, or gzip-compressed .json.gz): export/chrome_trace.h.
class ChromeTraceExporter final : public Exporter {
 public:
  explicit ChromeTraceExporter(ChromeTraceOptions options) : options_(std::move(options)) {}
  void write(const AnalysedTrace& trace, const std::string& path) const override;

 private:
  ChromeTraceOptions options_;
};

// Folded stacks for FlameGraph and speedscope: export/folded_stacks.h.
class FoldedStacksExporter final : public Exporter {
 public:
  explicit FoldedStacksExporter(FoldedMetric metric) : metric_(metric) {}
  void write(const AnalysedTrace& trace, const std::string& path) const override;

 private:
  FoldedMetric metric_;
};

enum class MemoryTimelineFormat {
  Json,  // [times_us, sizes], torch.profiler's export_memory_timeline JSON
  Raw,   // every change, torch.profiler's raw JSON
  Html,  // the stacked-area plot, a self-contained page
};

// The bytes per memory category over time on one device: export/memory_timeline.h and
// export/memory_timeline_html.h.
class MemoryTimelineExporter final : public Exporter {
 public:
  MemoryTimelineExporter(memory::Device device, MemoryTimelineFormat format, std::string title)
      : device_(device), format_(format), title_(std::move(title)) {}
  void write(const AnalysedTrace& trace, const std::string& path) const override;

 private:
  memory::Device device_;
  MemoryTimelineFormat format_;
  std::string title_;  // of the HTML page
};

// memory_record.csv: the allocator's totals after each of its events (export/memory_csv.h).
class MemoryRecordCsvExporter final : public Exporter {
 public:
  void write(const AnalysedTrace& trace, const std::string& path) const override;
};

// operator_memory.csv: each allocation with its operator, module and category (export/memory_csv.h).
class OperatorMemoryCsvExporter final : public Exporter {
 public:
  void write(const AnalysedTrace& trace, const std::string& path) const override;
};

// The run database (SQLite): export/database/database.h, docs/formats/database.md.
class DatabaseExporter final : public Exporter {
 public:
  explicit DatabaseExporter(db::DatabaseOptions options) : options_(std::move(options)) {}
  void write(const AnalysedTrace& trace, const std::string& path) const override;

 private:
  db::DatabaseOptions options_;
};

// A summary table as CSV: kernel_details.csv, op_statistic.csv, ... (export/summary_csv.h).
class SummaryCsvExporter final : public Exporter {
 public:
  explicit SummaryCsvExporter(SummaryTable table) : table_(table) {}
  void write(const AnalysedTrace& trace, const std::string& path) const override;

 private:
  SummaryTable table_;
};

}  // namespace perfprof
