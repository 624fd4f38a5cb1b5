#include "export/database/kernel_name.h"

namespace perfprof::db {

std::string_view short_kernel_name(std::string_view name) {
  // The function's qualified name ends where its parameter list begins (the first '(' outside
  // template arguments), and its own name is what follows the last space or "::" before that,
  // outside template arguments.
  size_t begin = 0;
  size_t name_end = name.size();
  size_t template_begin = std::string_view::npos;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') {
      if (depth++ == 0) template_begin = i;
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0 && c == '(') {
      name_end = i;
      break;
    } else if (depth == 0 && (c == ' ' || (c == ':' && i + 1 < name.size() && name[i + 1] == ':'))) {
      begin = c == ' ' ? i + 1 : i + 2;
      template_begin = std::string_view::npos;
    }
  }
  const size_t end = template_begin != std::string_view::npos && template_begin > begin ? template_begin : name_end;
  const std::string_view result = name.substr(begin, end > begin ? end - begin : 0);
  return result.empty() ? name : result;
}

}  // namespace perfprof::db
