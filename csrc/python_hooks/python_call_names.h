#pragma once
// with_stack: the names of Python-call ranges, written as torch.profiler's Python tracer writes
// them so that the python_function events and key_averages rows are torch's:
//  - a Python function: "file(line): function", the file without the first of the path prefixes
//    (sys.path and site directories, longest first) that starts it, and the line the frame is at
//    when the call starts or resumes: the first line of the function (co_firstlineno, decorators
//    included) for a call, the line of the `yield` for a resumed generator;
//  - a frame of torch.nn.Module.__call__: "nn.Module: Linear_0" (module_calls.h numbering);
//  - a built-in: the repr of the first bound built-in seen with that method definition in the
//    session, object address included ("<built-in method get of dict object at 0x7f...>"). torch
//    names a built-in once per definition and session, so later calls on other objects share
//    that name, and so does perfprof.
// Everything here runs under the GIL.
#include <Python.h>

#include <frameobject.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/string_table.h"

namespace perfprof::python_hooks {

// Names that are not names.
inline constexpr StringId kUnnamed = UINT32_MAX;         // its name could not be read: not recorded
inline constexpr StringId kOwnCode = UINT32_MAX - 1;     // perfprof's own function: neither it nor
                                                         // what it calls is recorded
inline constexpr StringId kModuleCall = UINT32_MAX - 2;  // torch.nn.Module.__call__: named by module

struct NamingRules {
  std::string own_prefix;                  // files under it are perfprof's
  std::vector<std::string> path_prefixes;  // removed from file names, the first that matches
  PyObject* module_call_code = nullptr;    // borrowed here; the code of Module.__call__, or null
};

// What names depend on; the names cached under other rules are dropped.
void set_naming_rules(NamingRules rules);

// A new session (a recording window): built-ins are named by their next call.
void new_naming_session();

// A call from the start of `code`: cached per code object (kept alive for that).
StringId started_code_name(PyCodeObject* code);

// `code` resumed at instruction `offset` (bytes): cached per (code, offset); `line_of()` gives
// the line when it is not cached yet.
template <typename LineOf>
StringId resumed_code_name(PyCodeObject* code, int offset, LineOf&& line_of);

// A frame already running when tracing starts, at `line` (not cached: taken once per session).
StringId code_name_at_line(PyCodeObject* code, int line);

// Whether `code` is Module.__call__'s: its frames are module calls (RangeKind::Module).
bool is_module_call(PyCodeObject* code);

// The module a frame of Module.__call__ runs (its `self`), or kUnnamed.
StringId module_frame_name(PyFrameObject* frame);

// A built-in method definition bound to `self` (null, or a module, for a function).
StringId builtin_name(const PyMethodDef* method, PyObject* self);

// -- implementation of the template ---------------------------------------------------------------

// The cached name of `code` at `offset`, or kUnnamed when there is none yet.
StringId cached_code_name(PyCodeObject* code, int offset);
// Names `code` at `offset` as being at `line`, and caches it.
StringId add_code_name(PyCodeObject* code, int offset, int line);

template <typename LineOf>
StringId resumed_code_name(PyCodeObject* code, int offset, LineOf&& line_of) {
  const StringId cached = cached_code_name(code, offset);
  return cached != kUnnamed ? cached : add_code_name(code, offset, line_of());
}

}  // namespace perfprof::python_hooks
