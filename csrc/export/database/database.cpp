#include "export/database/database.h"

#include <stdexcept>

#include <fmt/format.h>

#include "export/database/sqlite.h"
#include "export/database/tables.h"
#include "export/output_file.h"

namespace perfprof {
namespace {

void write_tables(db::Database& database, const AnalysedTrace& trace, const db::DatabaseOptions& options) {
  db::Context context(database, trace);
  database.exec("BEGIN");
  db::write_run_tables(context, options);
  db::write_gpu_tables(context);
  db::write_api_tables(context);
  db::write_pytorch_tables(context);
  db::write_nvtx_tables(context);
  db::write_memory_tables(context);
  db::write_summary_tables(context);
  db::write_communication_tables(context);
  db::write_telemetry_tables(context);
  db::write_string_table(context);
  database.exec("COMMIT");
}

}  // namespace

void write_database(const AnalysedTrace& trace, const std::string& path, const db::DatabaseOptions& options) {
  TemporaryPath temporary(path);
  try {
    db::Database database(temporary.path());
    write_tables(database, trace, options);
    database.close();
  } catch (const std::runtime_error& error) {
    // SQLite's errors name the temporary file: name the one the caller asked for.
    throw std::runtime_error(fmt::format("cannot write '{}': {}", path, error.what()));
  }
  temporary.rename_into_place();
}

}  // namespace perfprof
