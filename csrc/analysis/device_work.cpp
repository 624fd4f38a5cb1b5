#include "analysis/device_work.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace perfprof {
namespace {

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(),
                    [](char p, char t) { return p == std::tolower(static_cast<unsigned char>(t)); });
}

}  // namespace

std::string_view device_work_type_name(DeviceWorkType type) {
  switch (type) {
    case DeviceWorkType::Compute: return "Compute";
    case DeviceWorkType::Communication: return "Communication";
    case DeviceWorkType::Memory: return "Memory";
  }
  return "";
}

bool is_communication_kernel(std::string_view name) {
  constexpr std::string_view kDemangledPrefix = "void ";
  if (name.substr(0, kDemangledPrefix.size()) == kDemangledPrefix) name.remove_prefix(kDemangledPrefix.size());
  constexpr std::array<std::string_view, 2> kLibraries = {"nccl", "rccl"};
  return std::any_of(kLibraries.begin(), kLibraries.end(),
                     [&](std::string_view library) { return starts_with_ignoring_case(name, library); });
}

DeviceWorkType device_work_type(const TraceModel& model, const GpuActivity& activity) {
  switch (activity.kind) {
    case GpuActivityKind::Memcpy:
    case GpuActivityKind::Memset:
      return DeviceWorkType::Memory;
    case GpuActivityKind::Kernel:
      return is_communication_kernel(model.str(activity.name)) ? DeviceWorkType::Communication
                                                               : DeviceWorkType::Compute;
    default:
      return DeviceWorkType::Compute;
  }
}

}  // namespace perfprof
