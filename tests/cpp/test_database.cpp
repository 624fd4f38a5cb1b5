// The run database (export/database/) on traces built by hand, read back with SQLite.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/analysed_trace.h"
#include "export/database/database.h"
#include "kernel_metrics_model.h"
#include "model_builder.h"
#include "test_util.h"

namespace perfprof {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// The rows `sql` selects from the database at `path`, each value as text: integers in decimal,
// reals as fmt writes them (shortest round-trip), NULL as "NULL".
Rows query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  sqlite3_stmt* statement = nullptr;
  Rows rows;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sqlite3_errmsg(db) << " in " << sql;
    sqlite3_close(db);
    return rows;
  }
  while (sqlite3_step(statement) == SQLITE_ROW) {
    std::vector<std::string>& row = rows.emplace_back();
    for (int i = 0; i < sqlite3_column_count(statement); ++i) {
      switch (sqlite3_column_type(statement, i)) {
        case SQLITE_INTEGER: row.push_back(std::to_string(sqlite3_column_int64(statement, i))); break;
        case SQLITE_FLOAT: row.push_back(fmt::format("{}", sqlite3_column_double(statement, i))); break;
        case SQLITE_NULL: row.push_back("NULL"); break;
        default: row.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, i)));
      }
    }
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

std::string write(const TraceModel& model, const test::TempDir& dir) {
  const std::string path = dir.file("perfprof.db");
  write_database(AnalysedTrace(model), path, db::DatabaseOptions{});
  return path;
}

TEST(Database, KernelMetricsAreOneRowPerMeasuredKernelAndEvaluatedMetric) {
  namespace metrics = test::kernel_metrics_model;
  test::TempDir dir;
  const std::string path = write(test::measured_kernels(), dir);
  EXPECT_EQ(query(path, "SELECT name, type FROM pragma_table_info('GPU_KERNEL_METRICS') ORDER BY cid"),
            (Rows{{"start", "INTEGER"},
                  {"deviceId", "INTEGER"},
                  {"streamId", "INTEGER"},
                  {"correlationId", "INTEGER"},
                  {"metricNameId", "INTEGER"},
                  {"value", "REAL"}}));
  // gemm's DRAM Read (NaN) has no row; the copy and relu were not measured.
  const std::string start = std::to_string(metrics::kUnixOffsetNs + 1000);
  EXPECT_EQ(query(path, "SELECT m.start, m.deviceId, m.streamId, m.correlationId, s.value, m.value "
                        "FROM GPU_KERNEL_METRICS m JOIN StringIds s ON s.id = m.metricNameId ORDER BY m.rowid"),
            (Rows{{start, "1", "7", "21", metrics::kSmThroughput, "87.5"},
                  {start, "1", "7", "21", metrics::kDramWrite, "12345678901"}}));
  // Each row names its kernel as CUPTI_ACTIVITY_KIND_KERNEL has it.
  EXPECT_EQ(query(path, "SELECT DISTINCT s.value FROM GPU_KERNEL_METRICS m JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
                        "USING (start, deviceId, streamId, correlationId) JOIN StringIds s ON s.id = k.demangledName"),
            (Rows{{"gemm"}}));
}

TEST(Database, KernelMetricsTableIsWrittenEmptyWhenNothingWasMeasured) {
  test::ModelBuilder b;
  b.gpu_work(0, 100, "relu", 7);
  test::TempDir dir;
  EXPECT_EQ(query(write(b.model(), dir), "SELECT count(*) FROM GPU_KERNEL_METRICS"), (Rows{{"0"}}));
}

}  // namespace
}  // namespace perfprof
