#pragma once
// A TraceModel built by hand, for tests of what reads the trace model (analysis, exporters).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <optional>
#include <vector>
#include <unordered_map>

#include "test_util.h"
#include "torch_hooks/op_text.h"
#include "trace/trace_model.h"

namespace perfprof::test {

// Rows must be added in the order build_trace leaves them (per track, begin order, outer first).
class ModelBuilder {
 public:
  ModelBuilder() {
    model_.strings = {""};
    model_.arg_sets = {ArgSet{}};
  }

  // `input_dims` is an operator's input shapes as torch's hooks give them ("[[8, 64], []]"); a
  // text that is not such a list gives no args, as it does when recording.
  size_t range(int64_t begin, int64_t end, std::string_view name, std::string_view category = "cpu_op",
               uint64_t id = 0, uint8_t flags = 0, uint32_t track = 0, std::string_view input_dims = "") {
    RangeRow row;
    row.begin_ns = begin;
    row.end_ns = end;
    row.name = intern(name);
    row.kind = kind_named(category, name);
    row.args = input_dims_args(input_dims);
    row.track = row.end_track = track;
    row.id = id;
    row.flags = flags;
    return model_.ranges.append(row);
  }
  size_t op(int64_t begin, int64_t end, std::string_view name, uint64_t id, std::string_view input_dims) {
    return range(begin, end, name, "cpu_op", id, 0, 0, input_dims);
  }
  size_t frame(int64_t begin, int64_t end, std::string_view name, uint64_t id = 0) {
    return range(begin, end, name, "python_function", id);
  }
  // An nn.Module call, as the module-call wrapper and the Python tracer record it.
  size_t module(int64_t begin, int64_t end, std::string_view name, uint32_t track = 0) {
    const size_t row = range(begin, end, name, "python_function", 0, 0, track);
    model_.ranges.kind[row] = RangeKind::Module;
    return row;
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
  // A CUDA API call (runtime unless `driver`) with the CUPTI correlation id of what it launched.
  size_t api_call(int64_t begin, int64_t end, std::string_view name, uint32_t correlation, bool driver = false) {
    const size_t row = range(begin, end, name, driver ? "cuda_driver" : "cuda_runtime");
    model_.ranges.correlation[row] = correlation;
    return row;
  }
  // Device work named `name` on `stream`, launched by the API call with `correlation`.
  // Activities must be added in the model's order: by device, stream, start.
  GpuActivity& gpu_work(int64_t start, int64_t end, std::string_view name, uint32_t stream, uint32_t correlation = 0,
                        GpuActivityKind kind = GpuActivityKind::Kernel, uint64_t external_id = 0) {
    GpuActivity a;
    a.kind = kind;
    a.start_ns = start;
    a.end_ns = end;
    a.name = intern(name);
    a.stream = stream;
    a.correlation = correlation;
    model_.gpu.activities.push_back(a);
    model_.gpu.external_ids.push_back(external_id);
    return model_.gpu.activities.back();
  }
  // Adds a list of texts, one per input, to the args of range `row`: its input types
  // (ArgKey::InputTypes: "float", "TensorList", ...) or its concrete inputs (ArgKey::ConcreteInputs).
  void input_texts(size_t row, ArgKey key, std::initializer_list<std::string_view> texts) {
    ArgSet args = model_.args(model_.ranges.args[row]);
    std::vector<StringId> ids;
    for (const std::string_view text : texts) ids.push_back(intern(text));
    args.args.push_back({key, std::move(ids)});
    model_.ranges.args[row] = ArgSetId{static_cast<uint32_t>(model_.arg_sets.size())};
    model_.arg_sets.push_back(std::move(args));
  }
  const TraceModel& model() const { return model_; }
  TraceModel& mutable_model() { return model_; }

 private:
  StringId intern(std::string_view text) {
    const auto [found, inserted] = ids_.try_emplace(std::string(text), static_cast<StringId>(model_.strings.size()));
    if (inserted) model_.strings.emplace_back(text);
    return found->second;
  }

  ArgSetId input_dims_args(std::string_view input_dims) {
    const std::optional<IntTree> dims = input_dims.empty() ? std::nullopt : parse_int_lists(input_dims);
    if (!dims) return kNoArgs;
    const auto [found, inserted] =
        arg_ids_.try_emplace(std::string(input_dims), ArgSetId{static_cast<uint32_t>(model_.arg_sets.size())});
    if (inserted) model_.arg_sets.push_back({{{ArgKey::InputDims, *dims}}});
    return found->second;
  }

  TraceModel model_;
  std::unordered_map<std::string, StringId> ids_{{"", kEmptyString}};
  std::unordered_map<std::string, ArgSetId> arg_ids_;  // input dims text -> its set
};

}  // namespace perfprof::test
