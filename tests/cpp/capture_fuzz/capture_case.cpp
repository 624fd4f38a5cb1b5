#include "capture_fuzz/capture_case.h"

#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "analysis/analysed_trace.h"
#include "capture/capture_file.h"
#include "capture_fuzz/allocation_budget.h"
#include "export/exporters.h"
#include "trace/trace_builder.h"

namespace perfprof::fuzz {
namespace {

bool one_line(const std::string& text) { return !text.empty() && text.find('\n') == std::string::npos; }

void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Every file `perfprof analyse` writes from a trace.
void export_all(const AnalysedTrace& trace, const std::string& dir, bool with_database) {
  const auto path = [&](std::string_view name) { return (std::filesystem::path(dir) / name).string(); };
  ChromeTraceExporter(ChromeTraceOptions{}).write(trace, path("trace.json"));
  FoldedStacksExporter(FoldedMetric::SelfCpu).write(trace, path("cpu.folded"));
  FoldedStacksExporter(FoldedMetric::SelfDevice).write(trace, path("device.folded"));
  for (const SummaryTable table : kSummaryTables) {
    if (has_summary(trace, table)) SummaryCsvExporter(table).write(trace, path(summary_file_name(table)));
  }
  MemoryRecordCsvExporter().write(trace, path("memory_record.csv"));
  OperatorMemoryCsvExporter().write(trace, path("operator_memory.csv"));
  std::set<std::pair<int, int>> devices;
  for (const memory::Allocation& allocation : trace.model().memory.events.allocations) {
    devices.emplace(static_cast<int>(allocation.device.type), allocation.device.index);
  }
  for (const auto& [type, index] : devices) {
    const memory::Device device{static_cast<memory::DeviceType>(type), static_cast<int16_t>(index)};
    MemoryTimelineExporter(device, MemoryTimelineFormat::Raw, "").write(trace, path("memory_raw.json"));
    MemoryTimelineExporter(device, MemoryTimelineFormat::Html, "fuzz").write(trace, path("memory.html"));
  }
  if (with_database) DatabaseExporter(db::DatabaseOptions{}).write(trace, path("run.sqlite"));
}

CaseResult failed(std::string failure) { return {Outcome::Failed, std::move(failure), 0}; }

CaseResult read_build_and_export(std::string_view bytes, const std::string& dir, bool from_file, bool with_database) {
  CaptureReading reading;
  try {
    if (from_file) {
      const std::string path = (std::filesystem::path(dir) / "capture.ppcap").string();
      write_bytes(path, bytes);
      reading = read_capture_file(path);
    } else {
      reading = read_capture(bytes);
    }
  } catch (const CaptureFormatError& error) {
    if (!one_line(error.what())) return failed(fmt::format("refused in more than one line: {}", error.what()));
    return {Outcome::Refused, "", 0};
  }
  if (!reading.complete && !one_line(reading.problem)) {
    return failed(fmt::format("read with a problem that is not one line: '{}'", reading.problem));
  }
  const AnalysedTrace trace(build_trace(std::move(reading.capture)));
  export_all(trace, dir, with_database);
  return {reading.complete ? Outcome::Complete : Outcome::Incomplete, "", 0};
}

}  // namespace

uint64_t memory_budget(uint64_t capture_bytes) { return 4 * capture_bytes + (uint64_t{200} << 20); }

CaseResult run_case(std::string_view bytes, const std::string& dir, bool from_file, bool with_database) {
  CaseResult result;
  const AllocationBudget budget(memory_budget(bytes.size()));
  try {
    result = read_build_and_export(bytes, dir, from_file, with_database);
  } catch (const std::bad_alloc&) {
    result = failed("out of memory");
  } catch (const std::exception& error) {
    result = failed(fmt::format("an exception other than the capture's error: {}", error.what()));
  }
  const AllocationStats stats = budget.stats();
  if (stats.refused > 0 && result.outcome != Outcome::Failed) {
    result = failed("");  // an allocation past the budget was refused and the refusal caught on the way
  }
  if (stats.refused > 0) {
    result.failure += fmt::format(" (a request for {} bytes, past the budget of {}, was refused)",
                                  stats.largest_refused, memory_budget(bytes.size()));
  }
  result.peak_bytes = stats.peak_bytes;
  return result;
}

}  // namespace perfprof::fuzz
