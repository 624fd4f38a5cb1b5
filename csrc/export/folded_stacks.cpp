#include "export/folded_stacks.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "common/json_text.h"  // append_int
#include "export/output_file.h"

namespace perfprof {
namespace {

// A stack as the name ids of its frames, outermost first.
using Stack = std::vector<StringId>;

// The annotations around the event (steps, record_function, mstx ranges), outermost first, then
// the Python frames around it, then the other events around it, then the event.
Stack stack_of(const TraceModel& model, const OpTree& tree, size_t row) {
  Stack annotations, events;
  for (int64_t e = tree.parent_event[row]; e >= 0; e = tree.parent_event[static_cast<size_t>(e)]) {
    const auto around = static_cast<size_t>(e);
    (is_annotation(model.ranges.kind[around]) ? annotations : events).push_back(model.ranges.name[around]);
  }
  Stack stack(annotations.rbegin(), annotations.rend());
  const std::vector<size_t> frames = call_stack_frames(model, tree, row);
  for (auto f = frames.rbegin(); f != frames.rend(); ++f) stack.push_back(model.ranges.name[*f]);
  stack.insert(stack.end(), events.rbegin(), events.rend());
  stack.push_back(model.ranges.name[row]);
  return stack;
}

void append_frame(std::string& out, std::string_view name) {
  for (char c : name) {
    if (c == ';') out += ':';
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
}

std::string stack_text(const TraceModel& model, const Stack& stack) {
  std::string text;
  for (size_t i = 0; i < stack.size(); ++i) {
    if (i > 0) text += ';';
    append_frame(text, model.str(stack[i]));
  }
  return text;
}

int64_t round_half_up_us(int64_t ns) { return ns >= 0 ? (ns + 500) / 1000 : 0; }

}  // namespace

void write_folded_stacks(const TraceModel& model, const OpTree& tree, const std::string& path,
                         FoldedMetric metric) {
  const bool cpu = metric == FoldedMetric::SelfCpu;
  const std::vector<int64_t> values = cpu ? tree.self_ns : self_device_ns(model);
  std::map<Stack, int64_t> ns_by_stack;
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    if (values[i] == 0 || !is_nested(model, i) || (cpu && is_python_frame(model, i))) continue;
    ns_by_stack[stack_of(model, tree, i)] += values[i];
  }
  // Keyed by text, not ids: names that differ only in replaced characters share a line, and
  // the order does not depend on interning order.
  std::map<std::string, int64_t> ns_by_text;
  for (const auto& [stack, ns] : ns_by_stack) ns_by_text[stack_text(model, stack)] += ns;

  std::string text;
  for (const auto& [stack, ns] : ns_by_text) {
    const int64_t us = round_half_up_us(ns);
    if (us <= 0) continue;
    text += stack;
    text += ' ';
    append_int(text, us);
    text += '\n';
  }
  OutputFile file(path);
  file.write(text);
  file.commit();
}

}  // namespace perfprof
