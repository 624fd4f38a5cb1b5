#pragma once
// The members of a Chrome trace beside its events: the devices ("deviceProperties"), the rank
// ("distributedInfo"), perfprof's counts of what its run lost ("perfprofStats") and the scalars
// that describe the run ("trace_id", a user's metadata...).
#include <cstdint>
#include <string>
#include <vector>

#include "import/json_reader.h"
#include "record/gpu_records.h"
#include "trace/trace_model.h"

namespace perfprof {

// Which rank of which job a trace is.
struct DistributedInfo {
  std::string backend;
  int64_t rank = 0;
  int64_t world_size = 1;
};

// The devices of "deviceProperties", as torch.profiler and perfprof write them. Throws
// TraceImportError naming `path` for a value that is not an array of devices with counts.
std::vector<GpuDevice> devices_of(const JsonValue& properties, const std::string& path);

// "distributedInfo". Throws TraceImportError naming `path` for a rank outside its world.
DistributedInfo distributed_of(const JsonValue& info, const std::string& path);

// The loss counts of "perfprofStats" (what the profiled run could not record); other counts are
// the model's own and are derived again.
TraceStats recorded_losses_of(const JsonValue& stats);

// A JSON scalar's text as JSON, for metadata kept as the JSON it was; false for an array or an
// object.
bool scalar_json(const JsonValue& value, std::string& out);

// Throws TraceImportError "<path>: "<member>" <what>".
[[noreturn]] void fail_member(const std::string& path, const std::string& member, const std::string& what);

}  // namespace perfprof
