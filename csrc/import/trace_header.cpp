#include "import/trace_header.h"

#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "common/json_text.h"

namespace perfprof {
namespace {

using Type = JsonValue::Type;

}  // namespace

void fail_member(const std::string& path, const std::string& member, const std::string& what) {
  throw TraceImportError(fmt::format("{}: \"{}\" {}", path, member, what));
}

std::vector<GpuDevice> devices_of(const JsonValue& properties, const std::string& path) {
  if (properties.type != Type::Array) fail_member(path, "deviceProperties", "is not an array");
  std::vector<GpuDevice> devices;
  for (const JsonValue& item : properties.items) {
    GpuDevice device;
    const auto count = [&](const char* key, auto& field) {
      using Field = std::remove_reference_t<decltype(field)>;
      const JsonValue* member = item.member(key);
      if (member == nullptr) return;
      uint64_t value = 0;
      if (member->type != Type::Number || !json_uint(member->text, value) || value > std::numeric_limits<Field>::max()) {
        fail_member(path, "deviceProperties", fmt::format("has a device whose \"{}\" is not a count in range", key));
      }
      field = static_cast<Field>(value);
    };
    count("id", device.id);
    if (const JsonValue* name = item.member("name"); name != nullptr && name->type == Type::String) {
      device.name = name->text;
    }
    count("totalGlobalMem", device.global_memory_bytes);
    count("computeMajor", device.compute_major);
    count("computeMinor", device.compute_minor);
    count("maxThreadsPerBlock", device.max_threads_per_block);
    count("regsPerBlock", device.max_registers_per_block);
    count("regsPerMultiprocessor", device.max_registers_per_sm);
    count("warpSize", device.warp_size);
    count("sharedMemPerBlock", device.max_shared_memory_per_block);
    count("sharedMemPerMultiprocessor", device.max_shared_memory_per_sm);
    count("numSms", device.sm_count);
    uint32_t threads_per_sm = 0;
    count("maxThreadsPerMultiprocessor", threads_per_sm);
    if (device.warp_size != 0) device.max_warps_per_sm = threads_per_sm / device.warp_size;
    devices.push_back(std::move(device));
  }
  return devices;
}

DistributedInfo distributed_of(const JsonValue& info, const std::string& path) {
  if (info.type != Type::Object) fail_member(path, "distributedInfo", "is not an object");
  DistributedInfo distributed;
  if (const JsonValue* backend = info.member("backend"); backend != nullptr && backend->type == Type::String) {
    distributed.backend = backend->text;
  }
  const auto integer = [&](const char* key, int64_t& out, int64_t least) {
    const JsonValue* member = info.member(key);
    if (member == nullptr) return;
    if (member->type != Type::Number || !json_int(member->text, out) || out < least) {
      fail_member(path, "distributedInfo", fmt::format("has a \"{}\" that is not an integer >= {}", key, least));
    }
  };
  integer("rank", distributed.rank, 0);
  integer("world_size", distributed.world_size, 1);
  if (distributed.rank >= distributed.world_size) {
    fail_member(path, "distributedInfo",
                fmt::format("has rank {} outside its world_size {}", distributed.rank, distributed.world_size));
  }
  return distributed;
}

TraceStats recorded_losses_of(const JsonValue& stats) {
  TraceStats losses;
  const std::pair<const char*, uint64_t*> kept[] = {
      {"dropped_events", &losses.dropped_events},
      {"gpu_dropped_records", &losses.gpu_dropped_records},
      {"gpu_records_outside_window", &losses.gpu_records_outside_window},
      {"unreadable_torch_events", &losses.unreadable_torch_events},
      {"unreadable_torch_fields", &losses.unreadable_torch_fields},
      {"kernel_metrics_left_out", &losses.kernel_metrics_left_out},
      {"kernel_metrics_unmatched", &losses.kernel_metrics_unmatched}};
  for (const auto& [key, field] : kept) {
    const JsonValue* member = stats.member(key);
    if (member != nullptr && member->type == Type::Number) json_uint(member->text, *field);
  }
  return losses;
}

bool scalar_json(const JsonValue& value, std::string& out) {
  out.clear();
  switch (value.type) {
    case Type::Null: out = "null"; return true;
    case Type::True: out = "true"; return true;
    case Type::False: out = "false"; return true;
    case Type::Number: out = value.text; return true;
    case Type::String: append_json_string(out, value.text); return true;
    case Type::Array:
    case Type::Object: return false;
  }
  return false;
}

}  // namespace perfprof
