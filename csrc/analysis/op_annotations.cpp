#include "analysis/op_annotations.h"

#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/flops.h"

namespace perfprof {
namespace {

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

}  // namespace

void annotate_flops(TraceModel& model) {
  RangeTable& r = model.ranges;
  StringAppender appender(model.strings);
  std::unordered_map<uint64_t, StringId> annotated;  // (name, args) -> args with flops
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::CpuOp) continue;
    const uint64_t key = (uint64_t{r.name[i]} << 32) | r.args[i];
    const auto [found, inserted] = annotated.try_emplace(key, r.args[i]);
    if (inserted) {
      const uint64_t count = flops_of(model.str(r.name[i]), model.str(r.args[i]));
      if (count > 0) {
        std::string args = model.str(r.args[i]);
        if (!args.empty()) args += ", ";
        args += "\"flops\": ";
        args += std::to_string(count);
        found->second = appender.intern(std::move(args));
      }
    }
    r.args[i] = found->second;
  }
}

}  // namespace perfprof
