#pragma once
// torch.profiler's events() and key_averages() (torch 2.13): its function events
// (function_events.h), the device activities and the memory events outside every host event,
// listed one by one, or aggregated by key.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/trace_links.h"
#include "trace/trace_model.h"

namespace perfprof {

inline constexpr std::string_view kMemoryEventsName = "[memory]";

struct KeyAverageOptions {
  // Split rows by input shapes: the "Input Dims" of the args as torch's input_shapes has them
  // (a tensor list counts as []), e.g. "[[8, 64], []]"; events without any form one group.
  bool group_by_input_shape = false;
  // Split rows by the innermost N Python frames around the event (0: no split).
  int group_by_stack_n = 0;
  // Python frames (category python_function) are events of their own: torch has them with
  // with_stack=True. Without them there are no stacks either.
  bool python_functions = true;
};

struct KeyAverageRow {
  std::string name;
  std::string input_shapes;  // when grouping by them, else empty
  // When grouping by stack: the innermost N Python frames around the event (event_stacks.h),
  // innermost first, joined by "\n"; else empty.
  std::string stack;
  bool device = false;  // a GPU activity's row (kernel, memcpy, memset, graph launch)
  bool user_annotation = false;  // torch's is_user_annotation: a user's or torch's annotation range
  // What torch's FunctionEventAvg takes from the row's first event (in list order): whether it
  // ends on another thread, and whether it nests in another event (its table's
  // top_level_events_only leaves such rows out).
  bool first_async = false;
  bool first_nested = false;
  uint64_t count = 0;
  int64_t cpu_total_ns = 0;   // summed durations of host events (async ones included)
  int64_t self_cpu_ns = 0;    // summed FunctionEvents::self_ns
  int64_t device_total_ns = 0;  // summed FunctionEvents::device_total_ns, or activity durations
  int64_t self_device_ns = 0;   // summed FunctionEvents::self_device_ns, or activity durations
  // Bytes allocated (freed: negative) by allocator events during the host events, on the CPU
  // and on GPUs, in all threads; self: minus that of their children (0 for async events).
  int64_t cpu_memory_bytes = 0;
  int64_t self_cpu_memory_bytes = 0;
  int64_t device_memory_bytes = 0;
  int64_t self_device_memory_bytes = 0;
  uint64_t flops = 0;  // summed range_flops (with_flops)
};

// One row per key, in the order torch lists them: by the begin of their first event (longer
// events first on equal begins). Allocator events outside every host event form the row
// kMemoryEventsName (no time; their bytes). O(n log n) in ranges, activities and allocator
// events (plus the frames walked per event when grouping by stack).
std::vector<KeyAverageRow> key_averages(const TraceModel& model, const KeyAverageOptions& options);

// One event of torch's list: a KeyAverageRow of count 1 (input shapes always; the stack when
// `options` group by it), where it is and what it nests in.
struct FunctionEventRow {
  KeyAverageRow totals;
  int64_t os_tid = 0;      // host events: the thread it began on; others 0
  int64_t begin_ns = 0;    // trace clock
  int64_t end_ns = 0;
  int64_t parent = -1;     // the index in the list of the event it nests in, or -1
  bool async = false;      // ends on another thread than it began on: outside the tree
  int64_t sequence = -1;   // autograd sequence number, -1 for none
  // What the trace writes for it (trace_links.h), for torch's FunctionEvent fields:
  std::string_view category;  // "cat": cpu_op, user_annotation, python_function, kernel, cpu_instant_event...
  ArgSetId args = kNoArgs;    // host events: the range's arguments
  int64_t device_index = 0;   // host and memory events: the process id (torch's value); device events: the GPU
  uint64_t external_id = 0;   // "External id", 0 for none
  int64_t python_id = -1;     // Python frames: "Python id"; else -1
  FlowEnd flow;               // the fwdbwd or ac2g flow it starts or ends
};

// torch's list of events (prof.events()), in its order: by begin, longer events first.
std::vector<FunctionEventRow> function_event_list(const TraceModel& model, const KeyAverageOptions& options);

}  // namespace perfprof
