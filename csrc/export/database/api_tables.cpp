// The CUDA API calls the host made, as Nsight Systems exports them (CUPTI_ACTIVITY_KIND_RUNTIME,
// _DRIVER): the builder's CudaRuntime and CudaDriver ranges, linked to the GPU work they
// launched by correlationId.
#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

struct ApiRow {
  const Context& c;
  size_t i;  // row of TraceModel::ranges
};

// nsys's event classes of the two tables (ENUM_NSYS_EVENT_CLASS).
constexpr int kRuntimeEventClass = 0;
constexpr int kDriverEventClass = 1;

std::vector<Column<ApiRow>> api_columns() {
  return {
      {"start", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.time(r.c.model.ranges.begin_ns[r.i])); }},
      {"end", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.time(r.c.model.ranges.end_ns[r.i])); }},
      {"eventClass", SqlType::Integer,
       [](const ApiRow& r) {
         return SqlValue(r.c.model.ranges.kind[r.i] == RangeKind::CudaDriver ? kDriverEventClass : kRuntimeEventClass);
       }},
      {"globalTid", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.thread(r.c.model.ranges.track[r.i])); }},
      {"correlationId", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.model.ranges.correlation[r.i]); }},
      {"nameId", SqlType::Integer, [](const ApiRow& r) { return SqlValue(r.c.model.ranges.name[r.i]); }},
      {"returnValue", SqlType::Integer, [](const ApiRow&) { return SqlValue(); }},  // not collected
      {"callchainId", SqlType::Integer, [](const ApiRow&) { return SqlValue(); }},
  };
}

const Table<ApiRow> kRuntime{"CUPTI_ACTIVITY_KIND_RUNTIME", api_columns()};
const Table<ApiRow> kDriver{"CUPTI_ACTIVITY_KIND_DRIVER", api_columns()};

}  // namespace

void write_api_tables(Context& c) {
  TableWriter<ApiRow> runtime(c.db, kRuntime);
  TableWriter<ApiRow> driver(c.db, kDriver);
  const RangeTable& r = c.model.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::CudaRuntime) runtime.insert({c, i});
    if (r.kind[i] == RangeKind::CudaDriver) driver.insert({c, i});
  }
}

}  // namespace perfprof::db
