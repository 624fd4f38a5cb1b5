#pragma once
// communication_ops: one row per collective or point-to-point operation a rank ran, the rows
// cluster analysis matches across ranks (docs/cluster.md). Two sources:
//   device: each communication kernel (NCCL, RCCL: device_work.h), its time on the GPU;
//   host:   each backend's range of a collective (host_collectives.h: gloo:all_reduce), its time
//           on the backend's thread, waiting for the other ranks included.
// A GPU job has both (nccl:all_reduce is then the kernel's launch); readers take the device rows
// of a rank that has any. The size comes from the input shapes and types torch records on the
// backend's range (record_shapes): the device row takes that of the range around its launch.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "analysis/analysed_trace.h"

namespace perfprof {

enum class CommunicationSource : uint8_t { Device, Host };

// "device", "host".
std::string_view communication_source_name(CommunicationSource source);

struct CommunicationOp {
  CommunicationSource source = CommunicationSource::Host;
  StringId name = kEmptyString;  // the kernel's, or the range's
  int64_t begin_ns = 0;          // now_ns() clock, as the model's
  int64_t end_ns = 0;
  std::optional<uint32_t> track;   // host: the thread (TraceModel::threads index)
  std::optional<uint32_t> device;  // device: the GPU and stream
  std::optional<uint32_t> stream;
  // The backend's range: the row itself (host), or the one around the kernel's launch (device);
  // -1 when there is none.
  int64_t range_row = -1;
  std::optional<uint64_t> elements;  // Σ elements of the range's tensor inputs
  std::optional<uint64_t> bytes;     // the same in bytes, when every tensor input's type is known
  std::optional<StringId> data_type;  // the first tensor input's type ("float")
  // A send's destination or a receive's source (its rank in the process group), from the
  // arguments of the c10d::send / c10d::recv_ call that started it (torch records them with
  // record_shapes); none for collectives.
  std::optional<int64_t> peer;
};

// Device rows (in kernel_details' order), then host rows (in range order).
std::vector<CommunicationOp> communication_ops(const AnalysedTrace& trace);

}  // namespace perfprof
