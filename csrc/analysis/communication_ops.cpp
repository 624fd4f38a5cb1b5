#include "analysis/communication_ops.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "analysis/host_collectives.h"
#include "analysis/kernel_details.h"

namespace perfprof {
namespace {

// Bytes per element of the types torch writes in "Input type" (c10's names of its scalar types).
std::optional<uint64_t> element_bytes(std::string_view type) {
  struct Size {
    std::string_view type;
    uint64_t bytes;
  };
  constexpr Size kSizes[] = {
      {"double", 8}, {"float", 4}, {"c10::Half", 2}, {"c10::BFloat16", 2}, {"long int", 8}, {"int", 4},
      {"short int", 2}, {"signed char", 1}, {"unsigned char", 1}, {"bool", 1}, {"c10::complex<double>", 16},
      {"c10::complex<float>", 8}, {"c10::complex<c10::Half>", 4}, {"c10::Float8_e4m3fn", 1},
      {"c10::Float8_e5m2", 1}, {"c10::Float8_e4m3fnuz", 1}, {"c10::Float8_e5m2fnuz", 1}, {"unsigned int", 4},
      {"unsigned long", 8}, {"unsigned short", 2},
  };
  for (const Size& size : kSizes) {
    if (size.type == type) return size.bytes;
  }
  return std::nullopt;
}

// The position after the node at `pos` of an IntTree and everything it holds.
size_t after_node(const IntTree& tree, size_t pos) {
  if (!tree[pos].is_list) return pos + 1;
  size_t next = pos + 1;
  for (int64_t item = 0; item < tree[pos].value && next < tree.size(); ++item) next = after_node(tree, next);
  return next;
}

// The elements of one input's sizes at `pos`: a tensor's sizes multiply, a tensor list's tensors
// add up; an int is no tensor.
std::optional<uint64_t> elements_at(const IntTree& tree, size_t pos) {
  if (!tree[pos].is_list) return std::nullopt;
  uint64_t product = 1, sum = 0;
  bool nested = false;
  for (size_t next = pos + 1, item = 0; item < static_cast<size_t>(tree[pos].value) && next < tree.size(); ++item) {
    if (tree[next].is_list) {
      nested = true;
      sum += elements_at(tree, next).value_or(0);
    } else {
      product *= static_cast<uint64_t>(std::max<int64_t>(tree[next].value, 0));
    }
    next = after_node(tree, next);
  }
  return nested ? sum : product;
}

// The size of a backend range's tensor inputs: the inputs with a type that is a scalar type
// (not "Scalar", "TensorList" or ""), whose elements are counted from their sizes.
void set_size(const TraceModel& model, size_t row, CommunicationOp& op) {
  const ArgSet& args = model.args(model.ranges.args[row]);
  const IntTree* dims = args.find<IntTree>(ArgKey::InputDims);
  const std::vector<StringId>* types = args.find<std::vector<StringId>>(ArgKey::InputTypes);
  if (dims == nullptr || dims->empty() || !(*dims)[0].is_list) return;
  uint64_t elements = 0, bytes = 0;
  bool sized = true, counted = false;
  size_t pos = 1;
  for (int64_t input = 0; input < (*dims)[0].value && pos < dims->size(); ++input) {
    const std::string_view type = types != nullptr && static_cast<size_t>(input) < types->size()
                                      ? std::string_view(model.str((*types)[input]))
                                      : std::string_view();
    const std::optional<uint64_t> count = elements_at(*dims, pos);
    const std::optional<uint64_t> size = element_bytes(type);
    if (count && (size || type == "TensorList")) {
      if (!op.data_type && size) op.data_type = (*types)[input];
      elements += *count;
      bytes += *count * size.value_or(0);
      sized = sized && size.has_value();
      counted = true;
    }
    pos = after_node(*dims, pos);
  }
  if (!counted) return;
  op.elements = elements;
  if (sized) op.bytes = bytes;
}

// c10d's point-to-point calls: their third argument is the peer (dst for send, src for recv).
bool is_point_to_point_call(std::string_view name) {
  return name == "c10d::send" || name == "c10d::recv_" || name == "c10d::send_" || name == "c10d::recv";
}

bool is_point_to_point(std::string_view backend_range) {
  const auto ends_with = [&](std::string_view suffix) {
    return backend_range.size() >= suffix.size() && backend_range.substr(backend_range.size() - suffix.size()) == suffix;
  };
  return ends_with(":send") || ends_with(":recv");
}

// The peer of the point-to-point range at `row`: the argument of the latest c10d call that
// began on its thread no later than it did (ranges of a track are in begin order), looking back
// no further than the backend's range before it (which that call belongs to).
std::optional<int64_t> peer_of(const TraceModel& model, size_t row) {
  const RangeTable& r = model.ranges;
  constexpr size_t kPeerArgument = 2;
  for (size_t i = row; i-- > 0 && r.track[i] == r.track[row];) {
    const std::string& name = model.str(r.name[i]);
    if (is_backend_collective(name)) return std::nullopt;
    if (!is_point_to_point_call(name)) continue;
    const auto* concrete = model.args(r.args[i]).find<std::vector<StringId>>(ArgKey::ConcreteInputs);
    if (concrete == nullptr || concrete->size() <= kPeerArgument) return std::nullopt;
    const std::string& text = model.str((*concrete)[kPeerArgument]);
    int64_t peer = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), peer);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return peer;
  }
  return std::nullopt;
}

// Size, type and peer of an operation from its backend range at `row`.
void describe_from_range(const TraceModel& model, size_t row, CommunicationOp& op) {
  op.range_row = static_cast<int64_t>(row);
  set_size(model, row, op);
  if (is_point_to_point(model.str(model.ranges.name[row]))) op.peer = peer_of(model, row);
}

// The backend's range around the launch of a device row: up from the CUDA call that launched it.
int64_t backend_range_around(const AnalysedTrace& trace, int64_t launch_row) {
  const TraceModel& model = trace.model();
  for (int64_t row = launch_row; row >= 0; row = trace.tree().parent_event[static_cast<size_t>(row)]) {
    if (is_backend_collective(model.str(model.ranges.name[static_cast<size_t>(row)]))) return row;
  }
  return -1;
}

}  // namespace

std::string_view communication_source_name(CommunicationSource source) {
  return source == CommunicationSource::Device ? "device" : "host";
}

std::vector<CommunicationOp> communication_ops(const AnalysedTrace& trace) {
  const TraceModel& model = trace.model();
  std::vector<CommunicationOp> ops;
  for (const KernelDetail& kernel : kernel_details(trace)) {
    if (kernel.type != DeviceWorkType::Communication) continue;
    CommunicationOp op;
    op.source = CommunicationSource::Device;
    op.name = kernel.name;
    op.begin_ns = kernel.start_ns;
    op.end_ns = kernel.start_ns + kernel.duration_ns;
    op.device = kernel.device;
    op.stream = kernel.stream;
    const int64_t range = backend_range_around(trace, kernel.launch_row);
    if (range >= 0) describe_from_range(model, static_cast<size_t>(range), op);
    ops.push_back(op);
  }
  const RangeTable& r = model.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_backend_collective(model.str(r.name[i]))) continue;
    CommunicationOp op;
    op.name = r.name[i];
    op.begin_ns = r.begin_ns[i];
    op.end_ns = r.end_ns[i];
    op.track = r.track[i];
    describe_from_range(model, i, op);
    ops.push_back(op);
  }
  return ops;
}

}  // namespace perfprof
