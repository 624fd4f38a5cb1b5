#include "export/database/table.h"

#include <fmt/format.h>

namespace perfprof::db {

namespace {

std::string_view type_name(SqlType type) {
  switch (type) {
    case SqlType::Integer: return "INTEGER";
    case SqlType::Real: return "REAL";
    case SqlType::Text: return "TEXT";
    case SqlType::Key: return "INTEGER PRIMARY KEY";
  }
  return "";
}

}  // namespace

std::string create_table_sql(std::string_view table, const std::vector<std::pair<std::string_view, SqlType>>& columns) {
  std::string sql = fmt::format("CREATE TABLE {} (", table);
  for (size_t i = 0; i < columns.size(); ++i) {
    fmt::format_to(std::back_inserter(sql), "{}{} {}", i ? ", " : "", columns[i].first, type_name(columns[i].second));
  }
  return sql + ")";
}

std::string insert_sql(std::string_view table, size_t columns) {
  std::string sql = fmt::format("INSERT INTO {} VALUES (", table);
  for (size_t i = 0; i < columns; ++i) sql += i ? ",?" : "?";
  return sql + ")";
}

}  // namespace perfprof::db
