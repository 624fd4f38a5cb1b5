#pragma once
// Receives PyTorch's operator ranges without being compiled against PyTorch.
//
// torch's ITT and NVTX profiler states register RecordFunction observers (C++, on every thread
// the state reaches, autograd engine threads included) that report each operator to a
// process-wide "profiler stubs" object: ittStubs()->rangePush(name) for ITT, cudaStubs()->
// rangePush("name, seq = n, sizes = [...]") for NVTX. libtorch exports the functions that
// replace those objects (registerITTMethods / registerCUDAMethods), so perfprof registers its own
// stubs and the operator ranges land in its recorder, with no Python code per operator.
//
// The stubs are installed once and stay: when perfprof is not recording they hand every call to
// the stubs they replaced, so a user's own emit_itt / emit_nvtx keeps working.
#include <string>

namespace perfprof {

// Installs perfprof's stubs into the libtorch at `libtorch_cpu_path` (already loaded by
// `import torch`). Returns an empty string on success, else why it could not.
std::string install_torch_profiler_stubs(const std::string& libtorch_cpu_path);

}  // namespace perfprof
