#pragma once
// A TraceModel built by hand, for tests of what reads the trace model (analysis, exporters).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "trace/trace_model.h"

namespace perfprof::test {

// Rows must be added in the order build_trace leaves them (per track, begin order, outer first).
class ModelBuilder {
 public:
  ModelBuilder() { model_.strings = {""}; }

  size_t range(int64_t begin, int64_t end, std::string_view name, std::string_view category = "cpu_op",
               uint64_t id = 0, uint8_t flags = 0, uint32_t track = 0, std::string_view args = "") {
    RangeRow row;
    row.begin_ns = begin;
    row.end_ns = end;
    row.name = intern(name);
    row.category = intern(category);
    row.kind = range_kind_of(category);
    row.args = intern(args);
    row.track = row.end_track = track;
    row.id = id;
    row.flags = flags;
    return model_.ranges.append(row);
  }
  size_t op(int64_t begin, int64_t end, std::string_view name, uint64_t id, std::string_view args) {
    return range(begin, end, name, "cpu_op", id, 0, 0, args);
  }
  size_t frame(int64_t begin, int64_t end, std::string_view name, uint64_t id = 0) {
    return range(begin, end, name, "python_function", id);
  }
  void activity(int64_t start, int64_t end, uint64_t external_id,
                GpuActivityKind kind = GpuActivityKind::Kernel) {
    GpuActivity a;
    a.kind = kind;
    a.start_ns = start;
    a.end_ns = end;
    model_.gpu.activities.push_back(a);
    model_.gpu.external_ids.push_back(external_id);
  }
  const TraceModel& model() const { return model_; }
  TraceModel& mutable_model() { return model_; }

 private:
  StringId intern(std::string_view text) {
    const auto [found, inserted] = ids_.try_emplace(std::string(text), static_cast<StringId>(model_.strings.size()));
    if (inserted) model_.strings.emplace_back(text);
    return found->second;
  }

  TraceModel model_;
  std::unordered_map<std::string, StringId> ids_{{"", kEmptyString}};
};

}  // namespace perfprof::test
