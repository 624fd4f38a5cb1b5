#pragma once
// The schema of the run database, table by table: each table is defined once, as a list of
// columns that each give their name, SQL type and how a row's value is read. CREATE TABLE and
// the prepared INSERT are both made from that one list, so a column cannot be created without
// being written, or written into the wrong place.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "export/database/sqlite.h"

namespace perfprof::db {

// Key: INTEGER PRIMARY KEY, the row's id in SQLite's own b-tree, so a lookup by it needs no index
// (rows inserted in increasing order of it are appended).
enum class SqlType { Integer, Real, Text, Key };

// One value of a row: an integer, a real, a text or NULL.
class SqlValue {
 public:
  SqlValue() = default;  // NULL
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int>>>
  SqlValue(Int value) : kind_(Kind::Int), int_(static_cast<int64_t>(value)) {}
  template <typename Int>
  SqlValue(std::optional<Int> value) : kind_(value ? Kind::Int : Kind::Null), int_(value ? static_cast<int64_t>(*value) : 0) {}
  SqlValue(double value) : kind_(Kind::Real), real_(value) {}
  SqlValue(std::string_view text) : kind_(Kind::Text), text_(text) {}

  void bind(Statement& statement, int index) const {
    switch (kind_) {
      case Kind::Null: return statement.bind_null(index);
      case Kind::Int: return statement.bind_int(index, int_);
      case Kind::Real: return statement.bind_double(index, real_);
      case Kind::Text: return statement.bind_text(index, text_);
    }
  }

 private:
  enum class Kind : uint8_t { Null, Int, Real, Text };
  Kind kind_ = Kind::Null;
  int64_t int_ = 0;
  double real_ = 0;
  std::string_view text_;  // the text must outlive the row's insert
};

template <typename Row>
struct Column {
  std::string_view name;
  SqlType type;
  SqlValue (*value)(const Row& row);
};

template <typename Row>
struct Table {
  std::string_view name;
  std::vector<Column<Row>> columns;
};

std::string create_table_sql(std::string_view table, const std::vector<std::pair<std::string_view, SqlType>>& columns);
std::string insert_sql(std::string_view table, size_t columns);

// Creates `table` in `database` and inserts rows into it through one prepared statement.
template <typename Row>
class TableWriter {
 public:
  TableWriter(Database& database, const Table<Row>& table)
      : table_(table), insert_(created(database, table), insert_sql(table.name, table.columns.size())) {}

  void insert(const Row& row) {
    int index = 1;
    for (const Column<Row>& column : table_.columns) column.value(row).bind(insert_, index++);
    insert_.run();
  }

 private:
  // Creates the table, before its insert can be prepared; returns `database` for that.
  static Database& created(Database& database, const Table<Row>& table) {
    std::vector<std::pair<std::string_view, SqlType>> columns;
    for (const Column<Row>& column : table.columns) columns.emplace_back(column.name, column.type);
    database.exec(create_table_sql(table.name, columns));
    return database;
  }

  const Table<Row>& table_;
  Statement insert_;
};

}  // namespace perfprof::db
