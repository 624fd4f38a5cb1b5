#pragma once
// Folded stacks, the text format of Brendan Gregg's FlameGraph (flamegraph.pl) that speedscope
// also reads: one line per distinct stack, `outer;...;inner value`.
#include <string>

#include "analysis/op_tree.h"
#include "trace/trace_model.h"

namespace perfprof {

enum class FoldedMetric {
  SelfCpu,     // OpTree::self_ns of events
  SelfDevice,  // self_device_ns(): device work whose innermost launching range is the row
};

// Writes one line per distinct stack of the trace's events (gzip-compressed when `path` ends in
// ".gz"). The stack of an event is the annotations around it (schedule steps, record_function
// and mstx ranges: a flame graph per step and per user range), then the Python frames around
// it, then the other events around it, each outermost first, then the event itself, so the
// values add up to the sum of the events' self times. With SelfDevice, Python frames that launched device work directly (no
// event around the launch, e.g. a Triton kernel) get a line of their own, built the same way, so
// no attributed device work is lost; with SelfCpu they get none, as their own time is already in
// the self time of the event around them.
// Values are integer microseconds: the nanoseconds of each stack summed first, then rounded
// half up; lines that round to 0 are left out. Lines are sorted by stack text; ';' in names
// becomes ':' and line breaks become spaces. Throws std::runtime_error naming the path on I/O
// errors; the target is then left untouched.
void write_folded_stacks(const TraceModel& model, const OpTree& tree, const std::string& path,
                         FoldedMetric metric);

}  // namespace perfprof
