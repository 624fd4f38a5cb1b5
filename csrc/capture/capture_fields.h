#pragma once
// The members of each record a capture holds, in the order they are encoded (capture/
// byte_codec.h). Each struct's size is asserted beside its list: a member added to a struct
// changes its size and stops the build here until the list (and docs/formats/capture.md, and
// the format's minor version) say how it is stored.
#include <variant>

#include "capture/capture.h"
#include "capture/capture_error.h"

namespace perfprof {

#define PERFPROF_CAPTURE_RECORD_SIZE(Type, bytes) \
  static_assert(sizeof(Type) == (bytes), #Type " changed: update its fields() in capture/capture_fields.h")

template <typename Io>
void fields(Io& io, ProcessInfo& p) {
  io(p.pid);
  io(p.unix_offset_ns);
  io(p.name);
}

template <typename Io>
void fields(Io& io, CollectionWindow& w) {
  PERFPROF_CAPTURE_RECORD_SIZE(CollectionWindow, 16);
  io(w.begin_ns);
  io(w.end_ns);
}

template <typename Io>
void fields(Io& io, RunMetadata& m) {
  io(m.key);
  io(m.json);
  io(m.from_user);
}

template <typename Io>
void fields(Io& io, ThreadName& t) {
  io(t.os_tid);
  io(t.name);
}

template <typename Io>
void fields(Io& io, IntTreeNode& n) {
  io(n.value);
  io(n.is_list);
}

// `value` as a T: a writer's holds one, a reader's is made one.
template <typename T, typename Io>
void typed_value(Io& io, ArgValue& value) {
  if (!std::holds_alternative<T>(value)) value = T{};
  io(std::get<T>(value));
}

// An argument is its key, its value's type and the value, so a reader can read the keys a newer
// perfprof added (exporters leave out keys they do not know); a known key whose value has
// another type is refused.
template <typename Io>
void fields(Io& io, Arg& arg) {
  ArgType type = type_of(arg.value);
  io(arg.key);
  io(type);
  const ArgKeySpec* spec = spec_of(arg.key);
  if (spec != nullptr && spec->type != type) throw CaptureFormatError("an argument's value has another type than its key's");
  switch (type) {
    case ArgType::Int: typed_value<int64_t>(io, arg.value); break;
    case ArgType::Text: typed_value<StringId>(io, arg.value); break;
    case ArgType::Texts: typed_value<std::vector<StringId>>(io, arg.value); break;
    case ArgType::IntTree: typed_value<IntTree>(io, arg.value); break;
    default: throw CaptureFormatError("an argument's value has an unknown type");
  }
}

template <typename Io>
void fields(Io& io, ArgSet& set) {
  io(set.args);
}

template <typename Io>
void fields(Io& io, CompletedRange& r) {
  PERFPROF_CAPTURE_RECORD_SIZE(CompletedRange, 56);
  io(r.os_tid);
  io(r.begin_ns);
  io(r.end_ns);
  io(r.name);
  io(r.args);
  io(r.sequence);
  io(r.forward_os_tid);
  io(r.kind);
  io(r.imported);
}

template <typename Io>
void fields(Io& io, GpuActivity& a) {
  PERFPROF_CAPTURE_RECORD_SIZE(GpuActivity, 112);
  io(a.kind);
  io(a.start_ns);
  io(a.end_ns);
  io(a.device);
  io(a.context);
  io(a.stream);
  io(a.correlation);
  io(a.name);
  io(a.grid);
  io(a.block);
  io(a.registers_per_thread);
  io(a.static_shared_memory);
  io(a.dynamic_shared_memory);
  io(a.bytes);
  io(a.address);
  io(a.copy_kind);
  io(a.value);
  io(a.graph_id);
}

template <typename Io>
void fields(Io& io, ApiCall& c) {
  PERFPROF_CAPTURE_RECORD_SIZE(ApiCall, 48);
  io(c.driver);
  io(c.cbid);
  io(c.name);
  io(c.start_ns);
  io(c.end_ns);
  io(c.os_tid);
  io(c.correlation);
}

template <typename Io>
void fields(Io& io, GpuDevice& d) {
  PERFPROF_CAPTURE_RECORD_SIZE(GpuDevice, 112);
  io(d.id);
  io(d.name);
  io(d.sm_count);
  io(d.global_memory_bytes);
  io(d.memory_bandwidth_kbps);
  io(d.compute_major);
  io(d.compute_minor);
  io(d.warp_size);
  io(d.max_threads_per_block);
  io(d.max_registers_per_block);
  io(d.max_registers_per_sm);
  io(d.max_shared_memory_per_block);
  io(d.max_shared_memory_per_sm);
  io(d.max_warps_per_sm);
  io(d.max_blocks_per_sm);
  io(d.l2_cache_bytes);
}

template <typename Io>
void fields(Io& io, KernelMetricRow& k) {
  PERFPROF_CAPTURE_RECORD_SIZE(KernelMetricRow, 40);
  io(k.correlation);
  io(k.start_ns);
  io(k.values);
}

template <typename Io>
void fields(Io& io, KernelMetricsInput& m) {
  PERFPROF_CAPTURE_RECORD_SIZE(KernelMetricsInput, 64);
  io(m.columns);
  io(m.kernels_left_out);
  io(m.kernels_unmatched);
  io(m.kernels);
}

template <typename Io>
void fields(Io& io, StreamAnnotation& s) {
  PERFPROF_CAPTURE_RECORD_SIZE(StreamAnnotation, 16);
  io(s.range_id);
  io(s.stream);
}

namespace memory {

template <typename Io>
void fields(Io& io, Device& d) {
  PERFPROF_CAPTURE_RECORD_SIZE(Device, 4);
  io(d.type);
  io(d.index);
}

template <typename Io>
void fields(Io& io, Storage& s) {
  PERFPROF_CAPTURE_RECORD_SIZE(Storage, 32);
  io(s.tensor_id);
  io(s.ptr);
  io(s.device);
  io(s.bytes);
}

template <typename Io>
void fields(Io& io, Allocation& a) {
  PERFPROF_CAPTURE_RECORD_SIZE(Allocation, 64);
  io(a.time_ns);
  io(a.ptr);
  io(a.bytes);
  io(a.total_allocated);
  io(a.total_reserved);
  io(a.device);
  io(a.storage);
  io(a.os_tid);
  io(a.op);
}

template <typename Io>
void fields(Io& io, NodeInput& n) {
  PERFPROF_CAPTURE_RECORD_SIZE(NodeInput, 8);
  io(n.storage);
  io(n.write);
}

template <typename Io>
void fields(Io& io, FlowNode& n) {
  PERFPROF_CAPTURE_RECORD_SIZE(FlowNode, 64);
  io(n.time_ns);
  io(n.in_backward);
  io(n.inputs);
  io(n.allocations);
}

template <typename Io>
void fields(Io& io, KnownRole& r) {
  PERFPROF_CAPTURE_RECORD_SIZE(KnownRole, 8);
  io(r.storage);
  io(r.category);
}

template <typename Io>
void fields(Io& io, MemoryEvents& e) {
  io(e.storages);
  io(e.allocations);
  io(e.nodes);
  io(e.known_roles);
}

template <typename Io>
void fields(Io& io, ObservedTensor& o) {
  PERFPROF_CAPTURE_RECORD_SIZE(ObservedTensor, 40);
  io(o.ptr);
  io(o.device);
  io(o.time_ns);
  io(o.bytes);
  io(o.category);
}

}  // namespace memory

#undef PERFPROF_CAPTURE_RECORD_SIZE

}  // namespace perfprof
