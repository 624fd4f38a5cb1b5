#pragma once
// Each allocation of a memory-profiled window with what the memory tables report of it: the
// event that freed it, the module it was made in, its category. operator_memory.csv
// (memory_csv.h) and the database's OP_MEMORY (database/memory_tables.cpp) both read it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/categorizer.h"
#include "trace/trace_model.h"

namespace perfprof {

struct AllocationLifetime {
  size_t allocation = 0;          // index into model.memory.events.allocations
  std::optional<size_t> release;  // the event that freed it, if in the window
  std::string_view module;        // innermost nn.Module running, without "nn.Module: "; "" if none
  memory::Category category = memory::Category::kUnknown;
};

// Every allocation (event with bytes > 0), in event order.
std::vector<AllocationLifetime> allocation_lifetimes(const TraceModel& model, const memory::MemoryProfile& profile);

// "CPU", or "CUDA:N": the memory tables' device column.
std::string memory_device_name(memory::Device device);

}  // namespace perfprof
