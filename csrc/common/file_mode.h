#pragma once
// The mode of every file perfprof writes, whatever the umask (python/perfprof/_files.py's
// FILE_MODE is the same): readable by the owner's group, private to it.

namespace perfprof {

inline constexpr unsigned kOutputFileMode = 0640;

}  // namespace perfprof
