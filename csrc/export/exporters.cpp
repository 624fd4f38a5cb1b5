#include "export/exporters.h"

#include "export/database/database.h"
#include "export/memory_csv.h"
#include "export/memory_timeline.h"
#include "export/memory_timeline_html.h"
#include "export/output_file.h"

namespace perfprof {

void ChromeTraceExporter::write(const AnalysedTrace& trace, const std::string& path) const {
  write_chrome_trace(trace, path, options_);
}

void FoldedStacksExporter::write(const AnalysedTrace& trace, const std::string& path) const {
  write_folded_stacks(trace.model(), trace.tree(), path, metric_);
}

void MemoryTimelineExporter::write(const AnalysedTrace& trace, const std::string& path) const {
  switch (format_) {
    case MemoryTimelineFormat::Raw:
      write_memory_timeline_raw(trace.memory_profile(), device_, trace.model().unix_offset_ns, path);
      return;
    case MemoryTimelineFormat::Json:
      write_memory_timeline_json(trace.memory_timeline(device_), path);
      return;
    case MemoryTimelineFormat::Html: {
      OutputFile file(path);
      file.write(memory_timeline_html(trace.memory_timeline(device_), title_));
      file.commit();
      return;
    }
  }
}

void MemoryRecordCsvExporter::write(const AnalysedTrace& trace, const std::string& path) const {
  write_memory_record_csv(trace.model(), path);
}

void OperatorMemoryCsvExporter::write(const AnalysedTrace& trace, const std::string& path) const {
  write_operator_memory_csv(trace.model(), trace.memory_profile(), path);
}

void DatabaseExporter::write(const AnalysedTrace& trace, const std::string& path) const {
  write_database(trace, path, options_);
}

void SummaryCsvExporter::write(const AnalysedTrace& trace, const std::string& path) const {
  write_summary_csv(trace, table_, path);
}

}  // namespace perfprof
