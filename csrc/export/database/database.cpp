#include "export/database/database.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "export/database/sqlite.h"
#include "export/database/tables.h"

namespace perfprof {
namespace {

// The temporary file a database is written to, removed unless renamed into place.
class TemporaryPath {
 public:
  explicit TemporaryPath(const std::string& target) {
    static std::atomic<uint64_t> sequence{0};
    path_ = fmt::format("{}.tmp{}.{}", target, getpid(), sequence.fetch_add(1));
  }
  ~TemporaryPath() {
    if (!renamed_) std::remove(path_.c_str());
  }
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;

  const std::string& path() const { return path_; }
  void rename_to(const std::string& target) {
    if (std::rename(path_.c_str(), target.c_str()) != 0) {
      throw std::runtime_error(fmt::format("cannot create '{}': {}", target, std::strerror(errno)));
    }
    renamed_ = true;
  }

 private:
  std::string path_;
  bool renamed_ = false;
};

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
  temporary.rename_to(path);
}

}  // namespace perfprof
