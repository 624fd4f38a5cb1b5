#include "export/database/context.h"

namespace perfprof::db {

DatabaseStrings::DatabaseStrings(const std::vector<std::string>& model_strings) : model_strings_(model_strings) {
  ids_.reserve(model_strings.size());
  // A capture's unused ids hold ""; emplace keeps the first id of each text.
  for (size_t i = 0; i < model_strings.size(); ++i) ids_.emplace(model_strings[i], static_cast<StringId>(i));
}

StringId DatabaseStrings::id(std::string_view text) {
  const auto found = ids_.find(text);
  if (found != ids_.end()) return found->second;
  const auto id = static_cast<StringId>(size());
  added_.emplace_back(text);
  ids_.emplace(added_.back(), id);
  return id;
}

}  // namespace perfprof::db
