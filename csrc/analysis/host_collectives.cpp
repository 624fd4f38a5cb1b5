#include "analysis/host_collectives.h"

#include <algorithm>
#include <array>

namespace perfprof {

bool is_backend_collective(std::string_view name) {
  constexpr std::array<std::string_view, 4> kBackends = {"gloo:", "nccl:", "mpi:", "ucc:"};
  return std::any_of(kBackends.begin(), kBackends.end(),
                     [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; });
}

bool is_host_collective(std::string_view name) {
  constexpr std::string_view kDispatcherNamespace = "c10d::";
  return is_backend_collective(name) || name.substr(0, kDispatcherNamespace.size()) == kDispatcherNamespace ||
         name == "record_param_comms";
}

}  // namespace perfprof
