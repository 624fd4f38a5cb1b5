#pragma once
// Memory profiling's tables for spreadsheets and scripts:
//   memory_record.csv    the allocator's totals after each of its events
//   operator_memory.csv  each allocation: operator and module it came from, category, size,
//                        when it was made and freed, and the allocator's totals at both moments
#include <string>

#include "memory/categorizer.h"
#include "trace/trace_model.h"

namespace perfprof {

void write_memory_record_csv(const TraceModel& model, const std::string& path);
void write_operator_memory_csv(const TraceModel& model, const memory::MemoryProfile& profile, const std::string& path);

}  // namespace perfprof
