#include "export/database/sqlite.h"

#include <sqlite3.h>

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace perfprof::db {

Database::Database(std::string path) : path_(std::move(path)) {
  const int code = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (code != SQLITE_OK) {
    // A failed open still allocates a handle (for the message); no destructor will close it.
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
    sqlite3_close_v2(db_);
    throw std::runtime_error(fmt::format("cannot create '{}': {}", path_, message));
  }
  exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
       "PRAGMA cache_size=-65536;");
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

void Database::fail(const char* what) const {
  const char* message = db_ ? sqlite3_errmsg(db_) : "out of memory";
  throw std::runtime_error(fmt::format("{} '{}': {}", what, path_, message));
}

void Database::exec(const std::string& sql) {
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail("cannot write");
}

void Database::close() {
  sqlite3* db = db_;
  if (sqlite3_close(db) != SQLITE_OK) fail("cannot write");  // statements are all finalized by now
  db_ = nullptr;
}

Statement::Statement(Database& database, std::string_view sql) : database_(database) {
  check(sqlite3_prepare_v2(database.handle(), sql.data(), static_cast<int>(sql.size()), &statement_, nullptr),
        "cannot prepare a statement for");
}

Statement::~Statement() { sqlite3_finalize(statement_); }

void Statement::check(int code, const char* what) const {
  if (code != SQLITE_OK) database_.fail(what);
}

void Statement::bind_int(int index, int64_t value) {
  check(sqlite3_bind_int64(statement_, index, value), "cannot write");
}

void Statement::bind_double(int index, double value) {
  check(sqlite3_bind_double(statement_, index, value), "cannot write");
}

void Statement::bind_text(int index, std::string_view text) {
  check(sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC),
        "cannot write");
}

void Statement::bind_null(int index) { check(sqlite3_bind_null(statement_, index), "cannot write"); }

void Statement::run() {
  if (sqlite3_step(statement_) != SQLITE_DONE) database_.fail("cannot write");
  sqlite3_reset(statement_);
}

}  // namespace perfprof::db
