#pragma once
// Records PyTorch operators as host ranges. Called from torch's RecordFunction observers (through
// profiler_stubs) on whichever thread runs the operator, so everything here is per thread and
// lock-free after a name's first sighting on that thread.
namespace perfprof {

// `text` is the observer's range text (see op_text.h). Operators begun while the operator channel
// is off are remembered as such, so their end records nothing.
void begin_operator(const char* text) noexcept;
void end_operator() noexcept;

}  // namespace perfprof
