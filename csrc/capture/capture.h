#pragma once
// A capture: everything one profiling session recorded, with what the process knew about itself
// when it recorded (its id and name, its clock's offset to Unix time, its threads' names, the
// text of every interned string the events use). Building a trace reads a capture and nothing
// else, so a trace built in the profiled process and one built later from the capture file
// (docs/formats/capture.md) are the same.
#include <cstdint>
#include <string>
#include <vector>

#include "capture/stored_events.h"
#include "record/collected_events.h"
#include "record/gpu_records.h"

namespace perfprof {

// The kept part of the session (after warm-up), now_ns() clock.
struct CollectionWindow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

struct ProcessInfo {
  int64_t pid = 0;
  std::string name;
  int64_t unix_offset_ns = 0;  // add to a now_ns() value to get Unix time
};

// A thread the events name by OS id without having recorded into a buffer of its own (torch's
// autograd threads, CUDA API calls' threads, allocator events' threads).
struct ThreadName {
  int64_t os_tid = 0;
  std::string name;
};

// A description of the run the session belongs to, as a JSON value under a key: the profiler's
// own (its configuration, the distributed rank), or metadata the user added (add_metadata). It
// is written when recording begins, so a capture whose process was killed still says how its
// run was configured.
struct RunMetadata {
  std::string key;
  std::string json;        // a JSON value's text, as the caller gave it
  bool from_user = false;  // add_metadata / add_metadata_json, else perfprof's own
};

struct Capture {
  ProcessInfo process;
  std::vector<std::string> strings;  // indexed by StringId; ids the capture does not use are ""
  std::vector<ArgSet> arg_sets;      // indexed by ArgSetId; ids the capture does not use are empty
  std::vector<ThreadName> other_threads;
  // Each thread's events are those `stored` holds for it (a capture read from its bytes leaves
  // them there), then those in its ThreadEvents::events (a capture made in memory).
  CollectedEvents host;
  StoredEvents stored;
  GpuInput gpu;
  CollectionWindow window;
  std::vector<RunMetadata> metadata;  // in the order added: a key added again replaces it
};

// Calls `visit(events, count)` for the events of `thread` in recording order, a block at a time
// (StoredEvents), and returns how many of its stored events could not be read back.
template <typename Visit>
uint64_t for_each_event_block(const Capture& capture, const ThreadEvents& thread, Visit&& visit) {
  const uint64_t unreadable = capture.stored.for_each_block(thread.index, visit);
  if (!thread.events.empty()) visit(thread.events.data(), thread.events.size());
  return unreadable;
}

// The capture's host events with every stored event read into its thread's events (the
// whole capture in memory: for small captures and tests). Events that cannot be read back are
// counted as dropped.
CollectedEvents loaded_host(const Capture& capture);

// The number of events of each kind the capture's threads hold.
EventKindCounts event_kind_counts(const Capture& capture);

// Adds `more` (recorded later in the same session, its events in memory) to `into`: each
// thread's events after its own, strings by id, counts summed; `into`'s process description
// stays (`more`'s when it has none), `more`'s window wins where it has one.
void append_capture(Capture& into, Capture more);

// Events of every thread.
uint64_t host_event_count(const Capture& capture);

}  // namespace perfprof
