#pragma once
// The memory columns of torch.profiler's key_averages() (torch 2.13, _parse_kineto_results):
// what the allocator events add up to during each function event, and the allocator events
// during none, which torch lists as "[memory]" events of their own.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/function_events.h"
#include "trace/trace_model.h"

namespace perfprof {

struct MemoryBytes {
  int64_t cpu = 0;     // allocated on the CPU, frees negative
  int64_t device = 0;  // on GPUs
};

struct EventMemory {
  // Per range row, for events of torch's list (is_listed): the allocator events of any thread
  // from its begin to its end, both included; else 0.
  std::vector<MemoryBytes> total;
  // kNested events: total less their children's totals; else 0.
  std::vector<MemoryBytes> self;
  // Indexes into model.memory.events.allocations of those during no event of any thread
  // (merged calls and async events count), in time order.
  std::vector<size_t> outside;
};

// O((ranges + allocator events) log ranges).
EventMemory event_memory(const TraceModel& model, const FunctionEvents& events);

// The bytes of one allocator event.
MemoryBytes bytes_of(const memory::Allocation& allocation);

}  // namespace perfprof
