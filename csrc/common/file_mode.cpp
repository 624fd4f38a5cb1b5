#include "common/file_mode.h"

#include <cstdlib>
#include <string>

namespace perfprof {
namespace {

constexpr unsigned kDefaultFileMode = 0640;

unsigned mode_from_environment() {
  const char* text = std::getenv("PERFPROF_FILE_MODE");
  if (text == nullptr || *text == '\0') return kDefaultFileMode;
  char* end = nullptr;
  const unsigned long mode = std::strtoul(text, &end, 8);
  const bool owner_reads_and_writes = (mode & 0600) == 0600;
  return *end == '\0' && mode <= 0777 && owner_reads_and_writes ? static_cast<unsigned>(mode) : kDefaultFileMode;
}

}  // namespace

unsigned output_file_mode() {
  static const unsigned mode = mode_from_environment();
  return mode;
}

}  // namespace perfprof
