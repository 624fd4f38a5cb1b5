#pragma once
// The run database's table groups (docs/formats/database.md), each written by one function
// from the shared Context. Each group's tables are defined once, in its own file.
#include "export/database/context.h"

namespace perfprof::db {

// The schema version in META_DATA: raised whenever a table or column changes meaning or goes.
inline constexpr int kSchemaVersion = 5;

// CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _SYNCHRONIZATION, TARGET_INFO_GPU, GPU_KERNEL_METRICS
// (gpu_tables.cpp).
void write_gpu_tables(Context& c);
// CUPTI_ACTIVITY_KIND_RUNTIME, _DRIVER (api_tables.cpp).
void write_api_tables(Context& c);
// PYTORCH_API, ENUM_API_TYPE, CONNECTION_IDS, PYTORCH_CALLCHAINS, STEP_TIME, GC_RECORD, MODULES
// (pytorch_tables.cpp).
void write_pytorch_tables(Context& c);
// NVTX_EVENTS: mstx marks, ranges and domains (nvtx_tables.cpp).
void write_nvtx_tables(Context& c);
// MEMORY_RECORD, OP_MEMORY, MEMORY_CATEGORIES (memory_tables.cpp).
void write_memory_tables(Context& c);
// META_DATA, META_DATA_EXPORT, PROCESSES, ThreadNames, COUNTERS: users' counters (run_tables.cpp).
void write_run_tables(Context& c, const DatabaseOptions& options);
// KERNEL_DETAILS, OPERATOR_DETAILS, OP_STATISTIC, API_STATISTIC, STEP_TRACE_TIME,
// DATA_PREPROCESS: the summary tables' rows (summary_tables.cpp).
void write_summary_tables(Context& c);
// COMMUNICATION_OP: each collective and point-to-point operation (communication_tables.cpp).
void write_communication_tables(Context& c);
// HOST_CPU_USAGE, HOST_MEM_USAGE, HOST_DISK_USAGE, HOST_NETWORK_USAGE, GPU_TELEMETRY, GPU_PCIE,
// GPU_NVLINK: the samplers' counters (telemetry_tables.cpp).
void write_telemetry_tables(Context& c);
// StringIds: last, once every writer has added its texts (run_tables.cpp).
void write_string_table(Context& c);

}  // namespace perfprof::db
