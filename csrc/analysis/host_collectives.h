#pragma once
// Collective communication as PyTorch records it on the host. torch.distributed's operators go
// through the dispatcher as c10d::allreduce_, c10d::broadcast_, ... (where the call is made:
// launch only, for asynchronous backends), and each backend wraps the work itself in a range
// named "<backend>:<collective>": gloo's runs on its worker threads for the whole exchange,
// waiting for the other ranks included (gloo:all_reduce); NCCL's, MPI's and UCC's likewise
// (nccl:all_reduce). record_param_comms is torch's range for a collective's parameters.
#include <string_view>

namespace perfprof {

// A range of a torch.distributed collective or point-to-point operation, by its name.
bool is_host_collective(std::string_view name);

// A backend's own range of the collective's work ("gloo:all_reduce"): on CPU backends, the time
// the exchange took on this rank, waiting for the others included.
bool is_backend_collective(std::string_view name);

}  // namespace perfprof
