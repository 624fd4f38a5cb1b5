#include "import/trace_event.h"

#include <utility>

#include "trace/trace_model.h"

namespace perfprof {
namespace {

using Type = JsonValue::Type;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

}  // namespace

void TraceEvent::clear() {
  ph.clear();
  cat.clear();
  name.clear();
  id.clear();
  pid = tid = ts_ns = dur_ns = 0;
  pid_numeric = tid_numeric = has_tid = has_ts = has_dur = false;
  args.type = Type::Null;
  args.items.clear();
  args.keys.clear();
}

int64_t TraceEvent::int_arg(const char* key) const {
  const JsonValue* member = args.member(key);
  int64_t value = 0;
  if (member == nullptr || member->type != Type::Number || !json_int(member->text, value)) {
    throw BadEvent(fmt::format("its \"{}\" is missing or not an integer", key));
  }
  return value;
}

int64_t TraceEvent::optional_int(const char* key, int64_t absent, int64_t least) const {
  const JsonValue* member = args.member(key);
  if (member == nullptr) return absent;
  int64_t value = 0;
  if (member->type != Type::Number || !json_int(member->text, value) || value < least) {
    throw BadEvent(fmt::format("its \"{}\" is not an integer >= {}", key, least));
  }
  return value;
}

void TraceEvent::dim3_arg(const char* key, uint32_t (&out)[3]) const {
  const JsonValue* member = args.member(key);
  if (member == nullptr) return;
  if (member->type != Type::Array || member->items.size() != 3) {
    throw BadEvent(fmt::format("its \"{}\" is not [x, y, z]", key));
  }
  for (size_t i = 0; i < 3; ++i) {
    const JsonValue& item = member->items[i];
    int64_t value = 0;
    if (item.type != Type::Number || !json_int(item.text, value) || value < 0 ||
        value > std::numeric_limits<uint32_t>::max()) {
      throw BadEvent(fmt::format("its \"{}\" is not [x, y, z] of counts", key));
    }
    out[i] = static_cast<uint32_t>(value);
  }
}

uint8_t copy_kind_of(std::string_view name) {
  static constexpr std::pair<std::string_view, uint8_t> kKinds[] = {
      {"HtoD", 1}, {"DtoH", 2}, {"HtoA", 3}, {"AtoH", 4}, {"AtoA", 5},
      {"AtoD", 6}, {"DtoA", 7}, {"DtoD", 8}, {"HtoH", 9}, {"PtoP", 10}};
  constexpr std::string_view kPrefix = "Memcpy ";
  if (!starts_with(name, kPrefix)) return 0;
  const std::string_view code = name.substr(kPrefix.size(), 4);
  for (const auto& [text, kind] : kKinds) {
    if (code == text) return kind;
  }
  return 0;
}

bool gpu_kind_of(std::string_view cat, GpuActivityKind& kind) {
  static constexpr std::pair<std::string_view, GpuActivityKind> kKinds[] = {
      {"kernel", GpuActivityKind::Kernel},       {"gpu_memcpy", GpuActivityKind::Memcpy},
      {"gpu_memset", GpuActivityKind::Memset},   {"cuda_sync", GpuActivityKind::Synchronization},
      {"cuda_graph", GpuActivityKind::GraphLaunch}, {"gpu_user_annotation", GpuActivityKind::UserAnnotation}};
  for (const auto& [text, value] : kKinds) {
    if (cat == text) {
      kind = value;
      return true;
    }
  }
  return false;
}

bool range_kind_of(const TraceEvent& event, RangeKind& kind) {
  if (event.cat == "cpu_op") {
    kind = RangeKind::CpuOp;
  } else if (event.cat == "user_annotation") {
    kind = starts_with(event.name, kProfilerStepPrefix) ? RangeKind::Step
           : event.args.member("domain") != nullptr     ? RangeKind::Mstx
                                                        : RangeKind::UserAnnotation;
  } else if (event.cat == "python_function") {
    kind = starts_with(event.name, "nn.Module: ") ? RangeKind::Module : RangeKind::PythonFunction;
  } else if (event.cat == "gc") {
    kind = RangeKind::Gc;
  } else if (event.cat == "cuda_runtime") {
    kind = RangeKind::CudaRuntime;
  } else if (event.cat == "cuda_driver") {
    kind = RangeKind::CudaDriver;
  } else {
    return false;
  }
  return true;
}

}  // namespace perfprof
