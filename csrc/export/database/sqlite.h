#pragma once
// A small RAII wrapper over the SQLite C API for the run database: a connection, its prepared
// statements, and nothing else. Every failure throws std::runtime_error naming the file.
#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace perfprof::db {

class Database;

// A prepared statement, reused for every row: bind the parameters (1-based), then run().
class Statement {
 public:
  Statement(Database& database, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind_int(int index, int64_t value);
  void bind_double(int index, double value);
  void bind_text(int index, std::string_view text);  // not copied: must stay valid until run()
  void bind_null(int index);
  // Runs the statement (an insert: no result rows) and resets it for the next row.
  void run();

 private:
  void check(int code, const char* what) const;

  Database& database_;
  sqlite3_stmt* statement_ = nullptr;
};

// A connection to a new database file at `path`, set up for one bulk write: no journal, no
// syncs (the exporter writes to a temporary file and renames it, so a crash leaves no half
// database behind, and the journal would only cost time).
class Database {
 public:
  explicit Database(std::string path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(const std::string& sql);
  // Closes the connection, reporting a failure to write what was still buffered.
  void close();

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // Throws the error SQLite reports for the last call, as "what 'path': message".
  [[noreturn]] void fail(const char* what) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace perfprof::db
