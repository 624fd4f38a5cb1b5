#pragma once
// The mode of every file perfprof writes, whatever the umask: 0640 (readable by the owner's
// group, private to it), or the octal mode in PERFPROF_FILE_MODE when it is one the owner can
// read and write (python/perfprof/_files.py reads the same variable, by the same rule, and warns
// about a value it refuses).

namespace perfprof {

unsigned output_file_mode();

}  // namespace perfprof
