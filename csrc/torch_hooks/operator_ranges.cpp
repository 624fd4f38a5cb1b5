#include "torch_hooks/operator_ranges.h"

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "record/recorder.h"
#include "torch_hooks/op_text.h"

namespace perfprof {
namespace {

// Text -> the id `intern(text)` gives it, interned once per distinct text and without allocating
// on a hit. Keys point into `texts_`, whose strings never move (deque).
template <typename Id>
class ThreadTextCache {
 public:
  template <typename Intern>
  Id get(std::string_view key, Intern&& intern) {
    if (auto it = ids_.find(key); it != ids_.end()) return it->second;
    const Id id = intern(key);
    ids_.emplace(texts_.emplace_back(key), id);
    return id;
  }

 private:
  std::deque<std::string> texts_;
  std::unordered_map<std::string_view, Id> ids_;
};

struct ThreadCaches {
  ThreadTextCache<StringId> names;
  ThreadTextCache<ArgSetId> input_dims;
};

ThreadCaches& thread_caches() {
  thread_local ThreadCaches caches;
  return caches;
}

// The next range begun on this thread is torch.profiler.record_function's (user_scope_begins).
thread_local bool user_scope_next = false;

// The observers give a name, not torch's RecordScope, so the kind torch.profiler would give (its
// category) is told by perfprof's wrapper for torch.profiler.record_function's ranges, and
// otherwise read from the name, because the name is all torch hands over: torch's own scopes
// ("Optimizer.step#SGD.step", "enumerate(DataLoader)#...") carry a '#', for a record_function
// entered where the wrapper is not (TorchScript). torch.compile's "## Call CompiledFxGraph <key> ##"
// ranges carry '#' too, but torch files them under cpu_op (user_annotation only when it records
// their keyword inputs, with shapes).
RangeKind kind_of(std::string_view name, bool user_scope) {
  if (user_scope) return RangeKind::UserAnnotation;
  const bool compiled_graph = name.substr(0, 3) == "## ";
  return name.find('#') == std::string_view::npos || compiled_graph ? RangeKind::CpuOp : RangeKind::UserAnnotation;
}

StringId intern_name(std::string_view name) { return global_strings().intern(name); }

ArgSetId intern_input_dims(std::string_view sizes) {
  std::optional<IntTree> dims = parse_int_lists(sizes);
  if (!dims) return kNoArgs;  // not the format we know: leave it out rather than guess
  return global_arg_sets().intern({{{ArgKey::InputDims, std::move(*dims)}}});
}

}  // namespace

uint64_t begin_operator(const char* text) noexcept {
  if (text == nullptr) return 0;
  try {
    ThreadCaches& caches = thread_caches();
    const bool user_scope = std::exchange(user_scope_next, false);
    const OpText op = parse_op_text(text);
    const StringId name = caches.names.get(op.name, intern_name);
    const ArgSetId args = op.sizes.empty() ? kNoArgs : caches.input_dims.get(op.sizes, intern_input_dims);
    const uint64_t id = Recorder::next_range_id();
    Recorder& recorder = Recorder::instance();
    recorder.begin_range(id, name, kind_of(op.name, user_scope), args);
    if (op.sequence >= 0) recorder.range_sequence(op.sequence);
    return id;
  } catch (...) {
    return 0;  // out of memory: this operator is not recorded; torch's operator is unaffected
  }
}

void end_operator(uint64_t id) noexcept {
  Recorder::instance().end_recorded_range(id);
}

void user_scope_begins(bool begins) noexcept { user_scope_next = begins; }

}  // namespace perfprof
