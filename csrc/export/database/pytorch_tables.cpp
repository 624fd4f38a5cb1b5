// The PyTorch side of the run as torch_npu's database names it: host ranges (PYTORCH_API) with
// their kinds (ENUM_API_TYPE), the CUDA calls they launched (CONNECTION_IDS) and their Python
// stacks (PYTORCH_CALLCHAINS), the schedule's steps (STEP_TIME), Python's garbage-collection
// pauses (GC_RECORD), and perfprof's module call hierarchy (MODULES).
#include <charconv>
#include <map>
#include <optional>
#include <vector>
#include <unordered_map>
#include <unordered_set>

#include "analysis/op_annotations.h"
#include "analysis/op_tree.h"
#include "analysis/profiler_steps.h"
#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

// Ranges with a table of their own elsewhere stay out of PYTORCH_API: CUDA API calls
// (CUPTI_ACTIVITY_KIND_RUNTIME/_DRIVER), mstx (NVTX_EVENTS), GC pauses (GC_RECORD).
bool is_pytorch_api(RangeKind kind) {
  return kind != RangeKind::CudaRuntime && kind != RangeKind::CudaDriver && kind != RangeKind::Mstx &&
         kind != RangeKind::Gc;
}

// ENUM_API_TYPE: each RangeKind's number (PYTORCH_API.type) and name.
struct ApiType {
  RangeKind kind;
  std::string_view name;
};
constexpr ApiType kApiTypes[] = {
    {RangeKind::Other, "other"},
    {RangeKind::CpuOp, "op"},
    {RangeKind::UserAnnotation, "annotation"},
    {RangeKind::Step, "step"},
    {RangeKind::Mstx, "mstx"},
    {RangeKind::PythonFunction, "python_function"},
    {RangeKind::Module, "module"},
    {RangeKind::Gc, "gc"},
    {RangeKind::CudaRuntime, "cuda_runtime"},
    {RangeKind::CudaDriver, "cuda_driver"},
};

const Table<ApiType> kApiTypeTable{
    "ENUM_API_TYPE",
    {
        {"id", SqlType::Integer, [](const ApiType& t) { return SqlValue(static_cast<int>(t.kind)); }},
        {"name", SqlType::Text, [](const ApiType& t) { return SqlValue(t.name); }},
    }};

// What PYTORCH_API's columns need beyond the range itself.
struct ApiRow {
  const Context& c;
  size_t i;                           // row of TraceModel::ranges
  std::optional<uint64_t> connection;  // its id, when CUDA calls link to it (CONNECTION_IDS.id)
  std::optional<int64_t> forward_tid;  // a backward operator's forward operator's thread
  std::optional<StringId> dtypes, shapes;
  std::optional<int64_t> callchain;  // PYTORCH_CALLCHAINS.id of its Python stack
  std::optional<uint64_t> flops;     // an operator's, when its inputs give a count
  std::optional<int64_t> parent;     // its same_kind_parents row
};

const Table<ApiRow> kPytorchApi{
    "PYTORCH_API",
    {
        {"startNs", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.time(r.c.model.ranges.begin_ns[r.i])); }},
        {"endNs", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.time(r.c.model.ranges.end_ns[r.i])); }},
        {"globalTid", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.thread(r.c.model.ranges.track[r.i])); }},
        {"connectionId", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.connection); }},
        {"name", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.model.ranges.name[r.i]); }},
        {"sequenceNumber", SqlType::Integer,
         [](const ApiRow& r) {
           const int64_t sequence = r.c.model.ranges.sequence[r.i];
           return sequence < 0 ? SqlValue() : SqlValue(sequence);
         }},
        {"fwdThreadId", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.forward_tid); }},
        {"inputDtypes", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.dtypes); }},
        {"inputShapes", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.shapes); }},
        {"callchainId", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.callchain); }},
        {"type", SqlType::Integer, [](const ApiRow& r) { return SqlValue(static_cast<int>(r.c.model.ranges.kind[r.i])); }},
        // perfprof's: the operator's flops; the row's id (its TraceModel row: KERNEL_DETAILS refers to
        // it); the id of the range of the same type around it on its thread (op tree, call tree).
        {"flops", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.flops); }},
        {"id", SqlType::Key, [](const ApiRow& r) { return SqlValue(r.i); }},
        {"typeParentId", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.parent); }},
    }};

struct CallchainFrame {
  int64_t id;
  StringId frame;
  size_t depth;  // 0: the innermost frame
};

const Table<CallchainFrame> kCallchains{
    "PYTORCH_CALLCHAINS",
    {
        {"id", SqlType::Integer, [](const CallchainFrame& f) { return SqlValue(f.id); }},
        {"stack", SqlType::Integer, [](const CallchainFrame& f) { return SqlValue(f.frame); }},
        {"stackDepth", SqlType::Integer, [](const CallchainFrame& f) { return SqlValue(f.depth); }},
    }};

// Each distinct Python stack (the frames around a range, innermost first) gets an id and its
// rows in PYTORCH_CALLCHAINS once, however many ranges share it.
class Callchains {
 public:
  explicit Callchains(Context& c) : c_(c), writer_(c.db, kCallchains) {}

  std::optional<int64_t> of(size_t row) {
    const std::vector<size_t> frames = call_stack_frames(c_.model, c_.trace.tree(), row);
    if (frames.empty()) return std::nullopt;
    std::vector<StringId> names;
    names.reserve(frames.size());
    for (const size_t frame : frames) names.push_back(c_.model.ranges.name[frame]);
    const auto [found, added] = ids_.try_emplace(std::move(names), static_cast<int64_t>(ids_.size()));
    if (added) {
      for (size_t depth = 0; depth < found->first.size(); ++depth) writer_.insert({found->second, found->first[depth], depth});
    }
    return found->second;
  }

 private:
  Context& c_;
  TableWriter<CallchainFrame> writer_;
  std::map<std::vector<StringId>, int64_t> ids_;
};

// MODULES (perfprof's): each nn.Module call with the module call it ran in, the hierarchy a
// model's forward takes.
struct ModuleRow {
  const Context& c;
  size_t i;  // row of TraceModel::ranges
  int64_t id;
  std::optional<int64_t> parent;
};

const Table<ModuleRow> kModules{
    "MODULES",
    {
        {"id", SqlType::Key, [](const ModuleRow& r) { return SqlValue(r.id); }},
        {"parentId", SqlType::Integer, [](const ModuleRow& r) { return SqlValue(r.parent); }},
        {"nameId", SqlType::Integer, [](const ModuleRow& r) { return SqlValue(r.c.model.ranges.name[r.i]); }},
        {"startNs", SqlType::Integer, [](const ModuleRow& r) { return SqlValue(r.c.time(r.c.model.ranges.begin_ns[r.i])); }},
        {"endNs", SqlType::Integer, [](const ModuleRow& r) { return SqlValue(r.c.time(r.c.model.ranges.end_ns[r.i])); }},
        {"globalTid", SqlType::Integer, [](const ModuleRow& r) { return SqlValue(r.c.thread(r.c.model.ranges.track[r.i])); }},
    }};

// Module calls nest like the Python frames they are: a module's parent is the innermost module
// among the frames around it. Parents come before their children in row order.
void write_modules(Context& c) {
  TableWriter<ModuleRow> modules(c.db, kModules);
  const RangeTable& r = c.model.ranges;
  const OpTree& tree = c.trace.tree();
  std::unordered_map<size_t, int64_t> id_of_row;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::Module) continue;
    ModuleRow row{c, i, static_cast<int64_t>(id_of_row.size()), std::nullopt};
    for (int64_t frame = tree.parent_frame[i]; frame >= 0; frame = tree.parent_frame[static_cast<size_t>(frame)]) {
      const auto found = id_of_row.find(static_cast<size_t>(frame));
      if (found != id_of_row.end()) {
        row.parent = found->second;
        break;
      }
    }
    id_of_row.emplace(i, row.id);
    modules.insert(row);
  }
}

// An operator's flops (range_flops), derived once per distinct (name, args); nothing for 0.
class OperatorFlops {
 public:
  explicit OperatorFlops(const TraceModel& model) : model_(model) {}

  std::optional<uint64_t> of(size_t row) {
    const RangeTable& r = model_.ranges;
    if (r.kind[row] != RangeKind::CpuOp || r.args[row] == kNoArgs) return std::nullopt;
    const auto [found, added] = flops_.try_emplace(call_signature(r.name[row], r.args[row]), 0);
    if (added) found->second = range_flops(model_, row);
    return found->second == 0 ? std::nullopt : std::optional<uint64_t>(found->second);
  }

 private:
  const TraceModel& model_;
  std::unordered_map<uint64_t, uint64_t> flops_;
};

struct Connection {
  uint64_t id;  // the host range's id
  uint32_t correlation;
};

const Table<Connection> kConnections{
    "CONNECTION_IDS",
    {
        {"id", SqlType::Integer, [](const Connection& x) { return SqlValue(x.id); }},
        {"connectionId", SqlType::Integer, [](const Connection& x) { return SqlValue(x.correlation); }},
    }};

struct RangeRef {
  const Context& c;
  size_t i;
};

struct StepRef {
  const Context& c;
  const ProfilerStep& step;
};

const Table<StepRef> kSteps{
    "STEP_TIME",
    {
        {"id", SqlType::Integer,
         [](const StepRef& r) {
           const std::string& number = r.step.number;  // the N of ProfilerStep#N
           int64_t id = 0;
           const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), id);
           return error == std::errc() && end == number.data() + number.size() ? SqlValue(id) : SqlValue();
         }},
        {"startNs", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.c.time(r.step.begin_ns)); }},
        {"endNs", SqlType::Integer, [](const StepRef& r) { return SqlValue(r.c.time(r.step.end_ns)); }},
    }};

std::optional<int64_t> gc_arg(const RangeRef& r, ArgKey key) {
  const int64_t* value = r.c.model.args(r.c.model.ranges.args[r.i]).find<int64_t>(key);
  return value ? std::optional<int64_t>(*value) : std::nullopt;
}

const Table<RangeRef> kGcRecords{
    "GC_RECORD",
    {
        {"startNs", SqlType::Integer, [](const RangeRef& r) { return SqlValue(r.c.time(r.c.model.ranges.begin_ns[r.i])); }},
        {"endNs", SqlType::Integer, [](const RangeRef& r) { return SqlValue(r.c.time(r.c.model.ranges.end_ns[r.i])); }},
        // The thread the collection ran on (GC pauses are drawn on a track of their own).
        {"globalTid", SqlType::Integer,
         [](const RangeRef& r) {
           const std::optional<int64_t> tid = gc_arg(r, ArgKey::GcThread);
           return tid ? SqlValue(global_tid(r.c.model.pid, *tid)) : SqlValue(r.c.thread(r.c.model.ranges.track[r.i]));
         }},
        {"generation", SqlType::Integer, [](const RangeRef& r) { return SqlValue(gc_arg(r, ArgKey::GcGeneration)); }},
        {"collected", SqlType::Integer, [](const RangeRef& r) { return SqlValue(gc_arg(r, ArgKey::GcCollected)); }},
        {"uncollectable", SqlType::Integer, [](const RangeRef& r) { return SqlValue(gc_arg(r, ArgKey::GcUncollectable)); }},
    }};

// An operator's input types and shapes as the texts the Chrome trace gives them
// (["float","Scalar"], [[8,64],[]]), interned once per argument set.
struct InputTexts {
  std::optional<StringId> dtypes, shapes;
};

std::vector<InputTexts> input_texts(Context& c) {
  std::vector<InputTexts> texts(c.model.arg_sets.size());
  for (size_t id = 0; id < texts.size(); ++id) {
    const ArgSet& set = c.model.arg_sets[id];
    if (const auto* types = set.find<std::vector<StringId>>(ArgKey::InputTypes)) {
      std::string text;
      append_texts_json(text, *types, c.model.strings);
      texts[id].dtypes = c.strings.id(text);
    }
    if (const auto* dims = set.find<IntTree>(ArgKey::InputDims)) {
      std::string text;
      append_int_tree_json(text, *dims);
      texts[id].shapes = c.strings.id(text);
    }
  }
  return texts;
}

// CONNECTION_IDS: each CUDA call linked to the host range it ran in (its External id).
std::unordered_set<uint64_t> write_connections(Context& c) {
  TableWriter<Connection> connections(c.db, kConnections);
  std::unordered_set<uint64_t> linked;  // host range ids with a row
  const RangeTable& r = c.model.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.correlation[i] == 0 || r.external_id[i] == 0) continue;
    connections.insert({r.external_id[i], r.correlation[i]});
    linked.insert(r.external_id[i]);
  }
  return linked;
}

}  // namespace

void write_pytorch_tables(Context& c) {
  write_modules(c);
  TableWriter<ApiType> types(c.db, kApiTypeTable);
  for (const ApiType& type : kApiTypes) types.insert(type);

  const std::unordered_set<uint64_t> linked = write_connections(c);
  const std::vector<InputTexts> texts = input_texts(c);
  const RangeTable& r = c.model.ranges;
  std::unordered_map<size_t, int64_t> forward_tid;  // backward row -> its forward's thread
  for (const ForwardBackwardLink& link : c.model.forward_backward) {
    forward_tid[link.backward] = c.model.threads[r.track[link.forward]].os_tid;
  }
  TableWriter<ApiRow> api(c.db, kPytorchApi);
  const std::vector<int64_t> parents = same_kind_parents(c.model);
  Callchains callchains(c);
  OperatorFlops flops(c.model);
  TableWriter<StepRef> steps(c.db, kSteps);
  for (const ProfilerStep& step : profiler_steps(c.model)) steps.insert({c, step});
  TableWriter<RangeRef> gc(c.db, kGcRecords);
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::Gc) gc.insert({c, i});
    if (!is_pytorch_api(r.kind[i])) continue;
    const InputTexts& inputs = texts[index_of(r.args[i])];
    const int64_t parent = parents[i];
    ApiRow row{c,           i,           std::nullopt, std::nullopt, inputs.dtypes, inputs.shapes, callchains.of(i),
               flops.of(i), parent < 0 ? std::nullopt : std::optional<int64_t>(parent)};
    if (linked.count(r.id[i])) row.connection = r.id[i];
    if (!forward_tid.empty()) {
      const auto found = forward_tid.find(i);
      if (found != forward_tid.end()) row.forward_tid = found->second;
    }
    api.insert(row);
  }
}

}  // namespace perfprof::db
