#pragma once
// Records PyTorch operators as host ranges. Called from torch's RecordFunction observers (through
// profiler_stubs, which decide whether an operator is recorded and keep the open ones) on
// whichever thread runs the operator; lock-free after a name's first sighting on that thread.
#include <cstdint>

namespace perfprof {

// `text` is the observer's range text (see op_text.h). Returns the range id to end it with, or 0
// when it could not be recorded (then end_operator(0) records nothing).
uint64_t begin_operator(const char* text) noexcept;
void end_operator(uint64_t id) noexcept;

// The observers hand over a name, not torch's RecordScope. perfprof's wrapper of
// torch.profiler.record_function's __enter__ says around it (true, then false) that the range
// begun meanwhile on the calling thread is a user annotation (RecordScope::USER_SCOPE).
void user_scope_begins(bool begins) noexcept;

}  // namespace perfprof
