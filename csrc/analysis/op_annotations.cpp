#include "analysis/op_annotations.h"

#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/flops.h"
#include "export/json_text.h"

namespace perfprof {
namespace {

constexpr std::string_view kCpuOpCategory = "cpu_op";

// Appends texts to model.strings, reusing the id of a text it appended before.
class StringAppender {
 public:
  explicit StringAppender(std::vector<std::string>& strings) : strings_(strings) {}

  StringId intern(std::string text) {
    const auto found = ids_.find(text);
    if (found != ids_.end()) return found->second;
    const auto id = static_cast<StringId>(strings_.size());
    strings_.push_back(text);
    ids_.emplace(std::move(text), id);
    return id;
  }

 private:
  std::vector<std::string>& strings_;
  std::unordered_map<std::string, StringId> ids_;
};

void begin_member(std::string& args) {
  if (!args.empty()) args += ", ";
}

void append_call_stack(std::string& args, const TraceModel& model, const std::vector<size_t>& frames) {
  std::string stack;
  for (size_t f : frames) {
    if (!stack.empty()) stack += ';';
    stack += model.str(model.ranges.name[f]);
  }
  begin_member(args);
  args += "\"Call stack\": ";
  append_json_string(args, stack);
}

}  // namespace

void annotate_ops(TraceModel& model, const OpTree& tree, bool call_stacks, bool flops) {
  if (!call_stacks && !flops) return;
  RangeTable& r = model.ranges;
  StringAppender appender(model.strings);
  std::unordered_map<uint64_t, uint64_t> flops_cache;  // (name, args) -> flops
  const auto flops_of_row = [&](size_t i) -> uint64_t {
    const uint64_t key = (uint64_t{r.name[i]} << 32) | r.args[i];
    const auto [found, inserted] = flops_cache.try_emplace(key, 0);
    if (inserted) found->second = flops_of(model.str(r.name[i]), model.str(r.args[i]));
    return found->second;
  };
  for (size_t i = 0; i < r.size(); ++i) {
    if (model.str(r.category[i]) != kCpuOpCategory) continue;
    const std::vector<size_t> frames =
        call_stacks ? call_stack_frames(model, tree, i) : std::vector<size_t>{};
    const uint64_t count = flops ? flops_of_row(i) : 0;
    if (frames.empty() && count == 0) continue;

    std::string args = model.str(r.args[i]);
    if (!frames.empty()) append_call_stack(args, model, frames);
    if (count > 0) {
      begin_member(args);
      args += "\"flops\": ";
      args += std::to_string(count);
    }
    r.args[i] = appender.intern(std::move(args));
  }
}

}  // namespace perfprof
