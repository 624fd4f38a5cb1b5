#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "export/exporters.h"
#include "model_builder.h"
#include "test_util.h"

namespace perfprof {
namespace {

using test::TempDir;

AnalysedTrace sample_trace() {
  test::ModelBuilder builder;
  builder.op(1'000, 9'000, "aten::mm", 1, "[[2, 3], [3, 4]]");
  builder.op(2'000, 3'000, "aten::add", 2, "");
  builder.mutable_model().threads.push_back({0, 1001, "main"});
  return AnalysedTrace(builder.model());
}

std::vector<std::pair<std::string, std::unique_ptr<Exporter>>> every_format() {
  std::vector<std::pair<std::string, std::unique_ptr<Exporter>>> formats;
  formats.emplace_back("trace.json", std::make_unique<ChromeTraceExporter>(ChromeTraceOptions{}));
  formats.emplace_back("trace.json.gz", std::make_unique<ChromeTraceExporter>(ChromeTraceOptions{}));
  formats.emplace_back("stacks.txt", std::make_unique<FoldedStacksExporter>(FoldedMetric::SelfCpu));
  const memory::Device cpu{memory::DeviceType::kCpu, -1};
  formats.emplace_back("memory.json", std::make_unique<MemoryTimelineExporter>(cpu, MemoryTimelineFormat::Json, ""));
  formats.emplace_back("memory.raw.json", std::make_unique<MemoryTimelineExporter>(cpu, MemoryTimelineFormat::Raw, ""));
  formats.emplace_back("memory.html", std::make_unique<MemoryTimelineExporter>(cpu, MemoryTimelineFormat::Html, "t"));
  formats.emplace_back("memory_record.csv", std::make_unique<MemoryRecordCsvExporter>());
  formats.emplace_back("operator_memory.csv", std::make_unique<OperatorMemoryCsvExporter>());
  return formats;
}

TEST(Exporters, EveryFormatWritesThroughTheOneInterface) {
  const TempDir dir;
  const AnalysedTrace trace = sample_trace();
  for (const auto& [name, exporter] : every_format()) {
    const Exporter& format = *exporter;
    format.write(trace, dir.file(name));
    EXPECT_FALSE(test::read_file(dir.file(name)).empty()) << name;
  }
  EXPECT_NE(test::read_file(dir.file("stacks.txt")).find("aten::mm;aten::add 1"), std::string::npos);
}

TEST(Exporters, AnUnwritablePathIsNamedAndNothingIsLeftBehind) {
  const AnalysedTrace trace = sample_trace();
  for (const auto& [name, exporter] : every_format()) {
    const std::string path = "/nonexistent-dir/" + name;
    try {
      exporter->write(trace, path);
      ADD_FAILURE() << name << " was written to a missing directory";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace perfprof
