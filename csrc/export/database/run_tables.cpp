// What describes the run as a whole: META_DATA (torch_npu's name: schema version, distributed
// setup, the user's metadata and what Python passes in: configuration, environment), the
// process and its threads (nsys's PROCESSES and ThreadNames), perfprof's COUNTERS, and StringIds.
#include <fmt/format.h>

#include "analysis/step_trace_time.h"
#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

struct NameValue {
  std::string_view name;
  std::string_view value;
};

std::vector<Column<NameValue>> name_value_columns() {
  return {
      {"name", SqlType::Text, [](const NameValue& r) { return SqlValue(r.name); }},
      {"value", SqlType::Text, [](const NameValue& r) { return SqlValue(r.value); }},
  };
}

// torch_npu's: the run. nsys's META_DATA_EXPORT: the export itself (which program wrote it, the
// schema's version), so a reader knows which conventions the file follows.
const Table<NameValue> kMetaData{"META_DATA", name_value_columns()};
const Table<NameValue> kMetaDataExport{"META_DATA_EXPORT", name_value_columns()};

const Table<Context> kProcesses{
    "PROCESSES",
    {
        {"globalPid", SqlType::Integer, [](const Context& c) { return SqlValue(global_pid(c.model.pid)); }},
        {"pid", SqlType::Integer, [](const Context& c) { return SqlValue(c.model.pid); }},
        {"name", SqlType::Text, [](const Context& c) { return SqlValue(std::string_view(c.model.process_name)); }},
    }};

struct ThreadRow {
  StringId name;
  int64_t global_tid;
};

const Table<ThreadRow> kThreadNames{
    "ThreadNames",
    {
        {"nameId", SqlType::Integer, [](const ThreadRow& r) { return SqlValue(r.name); }},
        {"priority", SqlType::Integer, [](const ThreadRow&) { return SqlValue(); }},  // not collected
        {"globalTid", SqlType::Integer, [](const ThreadRow& r) { return SqlValue(r.global_tid); }},
    }};

struct CounterRef {
  const Context& c;
  size_t i;
};

const Table<CounterRef> kCounters{
    "COUNTERS",
    {
        {"timestamp", SqlType::Integer, [](const CounterRef& r) { return SqlValue(r.c.time(r.c.model.counters.ts_ns[r.i])); }},
        {"nameId", SqlType::Integer, [](const CounterRef& r) { return SqlValue(r.c.model.counters.name[r.i]); }},
        {"value", SqlType::Real, [](const CounterRef& r) { return SqlValue(r.c.model.counters.value[r.i]); }},
        {"globalTid", SqlType::Integer, [](const CounterRef& r) { return SqlValue(r.c.thread(r.c.model.counters.track[r.i])); }},
    }};

struct StringRow {
  StringId id;
  std::string_view value;
};

const Table<StringRow> kStringIds{
    "StringIds",
    {
        {"id", SqlType::Key, [](const StringRow& r) { return SqlValue(r.id); }},
        {"value", SqlType::Text, [](const StringRow& r) { return SqlValue(r.value); }},
    }};

// The rows of META_DATA: perfprof's own first, then the caller's.
std::vector<std::pair<std::string, std::string>> meta_data(const Context& c, const DatabaseOptions& options) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"schema_version", std::to_string(kSchemaVersion)},
      {"time_unit", "ns since the Unix epoch"},
      {"window_begin_ns", std::to_string(c.time(c.model.window_begin_ns))},
      {"window_end_ns", std::to_string(c.time(c.model.window_end_ns))},
      {"rank", std::to_string(options.rank)},
      {"world_size", std::to_string(options.world_size)},
      {"distributed_backend", options.distributed_backend},
      // What STEP_TRACE_TIME's device columns measure: "device" (the GPUs) or "host" (no device work).
      {"step_time_source", std::string(step_time_source_name(step_time_source(c.model)))},
  };
  for (const auto& [name, value] : c.model.stats.named()) rows.emplace_back(fmt::format("stats.{}", name), std::to_string(value));
  rows.insert(rows.end(), options.metadata.begin(), options.metadata.end());
  return rows;
}

}  // namespace

void write_run_tables(Context& c, const DatabaseOptions& options) {
  TableWriter<NameValue> meta(c.db, kMetaData);
  for (const auto& [name, value] : meta_data(c, options)) meta.insert({name, value});
  TableWriter<NameValue> exported(c.db, kMetaDataExport);
  const std::string schema_version = std::to_string(kSchemaVersion);
  for (const NameValue& row : {NameValue{"EXPORT_PROGRAM", "perfprof"}, NameValue{"EXPORT_SCHEMA_VERSION", schema_version},
                               NameValue{"TIME_UNIT", "ns since the Unix epoch"}}) {
    exported.insert(row);
  }
  TableWriter<Context>(c.db, kProcesses).insert(c);
  TableWriter<ThreadRow> threads(c.db, kThreadNames);
  for (const ThreadTrack& thread : c.model.threads) {
    threads.insert({c.strings.id(thread.name), global_tid(c.model.pid, thread.os_tid)});
  }
  TableWriter<CounterRef> counters(c.db, kCounters);
  // The samplers' counters have tables of their own (telemetry_tables.cpp).
  for (size_t i = 0; i < c.model.counters.size(); ++i) {
    if (c.model.counters.metric[i] == CounterMetric::User) counters.insert({c, i});
  }
}

void write_string_table(Context& c) {
  TableWriter<StringRow> strings(c.db, kStringIds);
  for (size_t id = 0; id < c.strings.size(); ++id) {
    strings.insert({static_cast<StringId>(id), c.strings.text(static_cast<StringId>(id))});
  }
}

}  // namespace perfprof::db
