#include "export/chrome_trace.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <iterator>
#include <set>
#include <string_view>
#include <unordered_map>
#include <variant>

#include <fmt/format.h>

#include "analysis/trace_links.h"
#include "common/json_text.h"
#include "export/output_file.h"

namespace perfprof {
namespace {

constexpr size_t kFlushBytes = 1 << 20;
constexpr int64_t kSpansSortIndex = 0x20000000;  // Kineto's: the "Spans" track below every other

// A keyword input's value (its KeywordValue type, then its text) as JSON. A number whose text is
// not one (a damaged capture) is written as the text.
void append_keyword_value(std::string& out, std::string_view value) {
  const std::string_view text = value.empty() ? value : value.substr(1);
  const auto type = static_cast<KeywordValue>(value.empty() ? '\0' : value[0]);
  if (type == KeywordValue::Int) {
    int64_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error == std::errc() && end == text.data() + text.size()) {
      append_int(out, number);
      return;
    }
  } else if (type == KeywordValue::Float) {
    const std::string digits(text);
    char* end = nullptr;
    const double number = std::strtod(digits.c_str(), &end);
    if (!digits.empty() && end == digits.c_str() + digits.size()) {
      append_json_number(out, number);
      return;
    }
  } else if (type == KeywordValue::Bool) {
    out += text == "true" ? "true" : "false";
    return;
  }
  append_json_string(out, text);
}

// Keyword inputs (name, value, name, value...) as one member per name, as torch.profiler writes
// them; a name without its value (a damaged capture) is left out.
void append_keyword_members(std::string& out, const std::vector<StringId>& pairs, const TraceModel& model) {
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    if (!out.empty()) out += ',';
    append_json_string(out, model.str(pairs[i]));
    out += ':';
    append_keyword_value(out, model.str(pairs[i + 1]));
  }
}

}  // namespace

std::string arg_members_json(const ArgSet& set, const TraceModel& model) {
  std::string out;
  for (const Arg& arg : set.args) {
    const ArgKeySpec* spec = spec_of(arg.key);
    if (spec == nullptr) continue;
    if (arg.key == ArgKey::KeywordInputs) {
      if (const auto* pairs = std::get_if<std::vector<StringId>>(&arg.value)) append_keyword_members(out, *pairs, model);
      continue;
    }
    if (!out.empty()) out += ',';
    append_json_string(out, spec->name);
    out += ':';
    if (const auto* number = std::get_if<int64_t>(&arg.value)) {
      append_int(out, *number);
    } else if (const auto* text = std::get_if<StringId>(&arg.value)) {
      append_json_string(out, model.str(*text));
    } else if (const auto* texts = std::get_if<std::vector<StringId>>(&arg.value)) {
      append_texts_json(out, *texts, model.strings);
    } else if (const auto* tree = std::get_if<IntTree>(&arg.value)) {
      append_int_tree_json(out, *tree);
    }
  }
  return out;
}

namespace {

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const AnalysedTrace& trace, OutputFile& file)
      : model_(trace.model()),
        tree_(trace.tree()),
        metrics_(trace.gpu_metrics()),
        file_(file),
        quoted_(model_.strings.size()),
        arg_members_(model_.arg_sets.size()),
        python_ids_(number_python_frames(model_)) {
    text_.reserve(kFlushBytes + (64 << 10));
    for (const ThreadTrack& thread : model_.threads) {
      std::string ids = "\"pid\":";
      append_int(ids, model_.pid);
      ids += ",\"tid\":";
      append_int(ids, thread.os_tid);
      track_ids_.push_back(std::move(ids));
    }
  }

  void write(const std::string& path, const ChromeTraceOptions& options) {
    write_header(options);
    write_process_metadata();
    write_gpu_metadata();
    for (size_t i = 0; i < model_.ranges.size(); ++i) write_range(i);
    for (size_t i = 0; i < model_.gpu.activities.size(); ++i) write_gpu_activity(i);
    write_flows();
    write_forward_backward_flows();
    for (size_t i = 0; i < model_.instants.size(); ++i) write_instant(i);
    for (size_t i = 0; i < model_.memory.events.allocations.size(); ++i) write_memory_event(i);
    for (size_t i = 0; i < model_.counters.size();) i = write_counters(i);
    write_window_markers();
    text_ += "\n  ],\n  \"traceName\": ";
    append_json_string(text_, path);
    text_ += "\n}\n";
    flush();
  }

 private:
  void write_header(const ChromeTraceOptions& options) {
    text_ += "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ";
    write_device_properties();
    // One member per line, with a space after the colon: HolisticTraceAnalysis finds the rank
    // with the regular expression "rank":\s+(\d+) on the first lines of the file.
    text_ += ",\n  \"distributedInfo\": {\"backend\": ";
    append_json_string(text_, options.distributed_backend);
    text_ += ", \"rank\": ";
    append_int(text_, options.rank);
    text_ += ", \"world_size\": ";
    append_int(text_, options.world_size);
    text_ += "},\n";
    for (const auto& [key, value] : options.metadata) {
      text_ += "  ";
      append_json_string(text_, key);
      text_ += ": ";
      text_ += value;
      text_ += ",\n";
    }
    write_stats();
    text_ += "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ";
    append_int(text_, model_.unix_offset_ns);
    text_ += ",\n  \"traceEvents\": [\n";
  }

  void write_stats() {
    text_ += "  \"perfprofStats\": {";
    const char* separator = "";
    for (const auto& [name, value] : model_.stats.named()) {
      fmt::format_to(std::back_inserter(text_), "{}\"{}\": {}", separator, name, value);
      separator = ", ";
    }
    text_ += "},\n";
  }

  void write_process_metadata() {
    const int64_t ts = model_.window_begin_ns;
    begin_event("M", ts);
    text_ += "\"name\":\"process_name\",\"pid\":";
    append_int(text_, model_.pid);
    text_ += ",\"tid\":0,\"args\":{\"name\":";
    append_json_string(text_, model_.process_name);
    text_ += "}}";
    begin_event("M", ts);
    text_ += "\"name\":\"process_labels\",\"pid\":";
    append_int(text_, model_.pid);
    text_ += ",\"tid\":0,\"args\":{\"labels\":\"CPU\"}}";
    for (size_t t = 0; t < model_.threads.size(); ++t) {
      begin_event("M", ts);
      text_ += "\"name\":\"thread_name\",";
      text_ += track_ids_[t];
      text_ += ",\"args\":{\"name\":";
      append_json_string(text_, model_.threads[t].name);
      text_ += "}}";
      begin_event("M", ts);
      text_ += "\"name\":\"thread_sort_index\",";
      text_ += track_ids_[t];
      text_ += ",\"args\":{\"sort_index\":";
      append_int(text_, static_cast<int64_t>(model_.threads[t].index));
      text_ += "}}";
    }
  }

  void write_range(size_t i) {
    const RangeTable& r = model_.ranges;
    if (!(r.flags[i] & kRangeAsync)) {
      begin_event("X", r.begin_ns[i]);
      write_identity(r.kind[i], r.name[i], r.track[i]);
      text_ += ",\"dur\":";
      append_ns_as_us(text_, r.end_ns[i] - r.begin_ns[i]);
      write_range_args(i);
      text_ += '}';
      return;
    }
    // Async slices pair by category and id; they may begin and end on different threads.
    begin_event("b", r.begin_ns[i]);
    write_identity(r.kind[i], r.name[i], r.track[i]);
    write_async_id(r.id[i]);
    write_range_args(i);
    text_ += '}';
    begin_event("e", r.end_ns[i]);
    write_identity(r.kind[i], r.name[i], r.end_track[i]);
    write_async_id(r.id[i]);
    text_ += '}';
  }

  void write_instant(size_t i) {
    const InstantTable& t = model_.instants;
    begin_event("i", t.ts_ns[i]);
    text_ += "\"s\":\"t\",";
    write_identity(t.kind[i], t.name[i], t.track[i]);
    if (t.args[i] != kNoArgs) {
      text_ += ",\"args\":{";
      text_ += arg_members(t.args[i]);
      text_ += '}';
    }
    text_ += '}';
  }

  // As torch.profiler writes an allocator event, so tools that read its memory events read ours.
  void write_memory_event(size_t i) {
    const memory::Allocation& a = model_.memory.events.allocations[i];
    begin_event("i", a.time_ns);
    text_ += "\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",";
    text_ += track_ids_[model_.memory.allocation_track[i]];
    fmt::format_to(std::back_inserter(text_),
                   ",\"args\":{{\"Total Reserved\":{},\"Total Allocated\":{},\"Bytes\":{},\"Addr\":{},"
                   "\"Device Type\":{},\"Device Id\":{}}}}}",
                   a.total_reserved, a.total_allocated, a.bytes, a.ptr, static_cast<int>(a.device.type), a.device.index);
  }

  // A user's counter is one event with its value under "value". A sampler's readings of one
  // metric at one time (every CPU, every disk...) are one event named by the metric, with an
  // argument per instance: each instance is a series of that counter track. Writes the rows
  // recorded at row i's time on its track (a sample's readings are recorded together), metric by
  // metric in the order they first appear; returns the next row.
  size_t write_counters(size_t i) {
    const CounterTable& t = model_.counters;
    size_t end = i + 1;
    while (end < t.size() && t.ts_ns[end] == t.ts_ns[i] && t.track[end] == t.track[i]) ++end;
    std::vector<bool> written(end - i, false);  // by row - i
    for (size_t first = i; first < end; ++first) {
      if (!written[first - i]) write_counter_event(first, end, i, written);
    }
    return end;
  }

  // One event: row `first`, and for a sampler's metric every later row of it before `end`.
  void write_counter_event(size_t first, size_t end, size_t block, std::vector<bool>& written) {
    const CounterTable& t = model_.counters;
    const bool user = t.metric[first] == CounterMetric::User;
    begin_event("C", t.ts_ns[first]);
    text_ += "\"name\":";
    if (user) {
      text_ += quoted(t.name[first]);
    } else {
      const CounterMetricInfo info = counter_metric_info(t.metric[first]);
      append_json_string(text_, fmt::format("{} ({})", info.title, info.unit));
    }
    text_ += ",\"pid\":";
    append_int(text_, model_.pid);
    text_ += ",\"args\":{";
    for (size_t row = first; row < (user ? first + 1 : end); ++row) {
      if (t.metric[row] != t.metric[first] || written[row - block]) continue;
      written[row - block] = true;
      if (row != first) text_ += ',';
      if (user) {
        text_ += "\"value\"";
      } else {
        text_ += quoted(t.name[row]);
      }
      text_ += ':';
      append_json_number(text_, t.value[row]);
    }
    text_ += "}}";
  }

  // The window as Kineto marks it at the end of every torch.profiler trace, for the tools that
  // find the recorded window by these markers: a "PyTorch Profiler (0)" span on a "Spans" track
  // (sorted last), "Iteration Start: PyTorch Profiler" at its begin and "Record Window End" at
  // its end (global instants). Kineto numbers the span by iteration, 0 in every torch.profiler
  // trace, and counts no operators in it ("Op count").
  void write_window_markers() {
    const int64_t begin = model_.window_begin_ns;
    const int64_t end = std::max(model_.window_end_ns, begin);
    begin_event("X", begin);
    text_ += R"json("cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","dur":)json";
    append_ns_as_us(text_, end - begin);
    text_ += R"(,"args":{"Op count":0}})";
    begin_event("M", begin);
    fmt::format_to(std::back_inserter(text_), R"("name":"process_sort_index","pid":"Spans","tid":0,"args":{{"sort_index":{}}}}})",
                   kSpansSortIndex);
    begin_event("i", begin);
    text_ += R"("s":"g","name":"Iteration Start: PyTorch Profiler","pid":"Traces","tid":"Trace PyTorch Profiler"})";
    begin_event("i", end);
    text_ += R"("s":"g","name":"Record Window End","pid":"","tid":""})";
  }

  // `{"ph":"X","ts":123.456,` with the separator from the previous event.
  void begin_event(const char* phase, int64_t ts_ns) {
    if (text_.size() >= kFlushBytes) flush();
    text_ += first_event_ ? "  {\"ph\":\"" : ",\n  {\"ph\":\"";
    first_event_ = false;
    text_ += phase;
    text_ += "\",\"ts\":";
    append_ns_as_us(text_, ts_ns);
    text_ += ',';
  }

  void write_identity(RangeKind kind, StringId name, uint32_t track) {
    text_ += "\"cat\":\"";
    text_ += category_name(kind);  // plain ASCII: no escaping
    text_ += '"';
    text_ += ",\"name\":";
    text_ += quoted(name);
    text_ += ',';
    text_ += track_ids_[track];
  }

  void write_async_id(uint64_t id) { fmt::format_to(std::back_inserter(text_), ",\"id\":\"0x{:x}\"", id); }

  // `,"args":{...}` of range i: its recorded args, then what the model knows about it; nothing
  // when there is none of either.
  void write_range_args(size_t i) {
    const RangeTable& r = model_.ranges;
    const size_t mark = text_.size();
    text_ += ",\"args\":{";
    args_begin_ = text_.size();
    if (r.args[i] != kNoArgs) {
      const std::string& members = arg_members(r.args[i]);
      if (!members.empty()) {
        next_member();
        text_ += members;
      }
    }
    if (r.flags[i] & kRangeUnfinished) fmt::format_to(next_member(), "\"unfinished\":true");
    // torch keeps the ProfilerStep#N range the profiler stopped in; a reader of the trace alone
    // needs this mark to count the steps as every other output does.
    if (r.flags[i] & kRangeStepTail) fmt::format_to(next_member(), "\"step_tail\":true");
    if (r.correlation[i] != 0) fmt::format_to(next_member(), "\"correlation\":{}", r.correlation[i]);
    if (const uint64_t external = range_external_id(model_, i)) fmt::format_to(next_member(), "\"External id\":{}", external);
    if (r.sequence[i] >= 0) fmt::format_to(next_member(), "\"Sequence number\":{}", r.sequence[i]);
    if (python_ids_[i] != 0) write_python_ids(i);
    if (text_.size() == args_begin_) {
      text_.resize(mark);
    } else {
      text_ += '}';
    }
  }

  // Where the next member of the args being written goes: after a comma unless it is the first.
  std::back_insert_iterator<std::string> next_member() {
    if (text_.size() != args_begin_) text_ += ',';
    return std::back_inserter(text_);
  }

  // A Python frame's id and its caller's ("Python parent id", null at the bottom of a stack), as
  // torch.profiler links its python_function slices: the stack of an operator is the chain of
  // frames from the innermost one around it.
  void write_python_ids(size_t i) {
    const int64_t parent = tree_.parent_frame[i];
    fmt::format_to(next_member(), "\"Python id\":{},\"Python parent id\":", python_ids_[i]);
    if (parent < 0) {
      text_ += "null";
    } else {
      append_int(text_, python_ids_[static_cast<size_t>(parent)]);
    }
  }

  // ---- GPU ----------------------------------------------------------------------------------

  // GPU tracks as torch.profiler lays them out: one process per device (pid = device id), one
  // thread per stream (tid = CUPTI stream id).
  void write_gpu_metadata() {
    std::set<uint32_t> devices;
    std::set<std::pair<uint32_t, uint32_t>> streams;
    for (const GpuActivity& a : model_.gpu.activities) {
      devices.insert(a.device);
      streams.emplace(a.device, track_of(a));
    }
    const int64_t ts = model_.window_begin_ns;
    for (uint32_t device : devices) {
      for (const char* field : {"process_name", "process_labels"}) {
        begin_event("M", ts);
        fmt::format_to(std::back_inserter(text_), R"("name":"{}","pid":{},"tid":0,"args":{{"{}":"GPU {}"}}}})",
                       field, device, field[8] == 'n' ? "name" : "labels", device);
      }
      begin_event("M", ts);
      fmt::format_to(std::back_inserter(text_),
                     R"("name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                     device, 0x1000000 + device);
    }
    for (const auto& [device, track] : streams) {
      begin_event("M", ts);
      const std::string name = track == kSynchronizationTrack ? "CUDA synchronization" : fmt::format("stream {}", track);
      fmt::format_to(std::back_inserter(text_), R"("name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                     device, track, name);
    }
  }

  void write_gpu_activity(size_t i) {
    const GpuActivity& a = model_.gpu.activities[i];
    const bool instant = a.kind == GpuActivityKind::MemoryAlloc || a.kind == GpuActivityKind::MemoryFree;
    begin_event(instant ? "i" : "X", a.start_ns);
    if (instant) text_ += "\"s\":\"t\",";
    text_ += "\"cat\":\"";
    text_ += gpu_category(a.kind);
    text_ += "\",\"name\":";
    text_ += quoted(a.name);
    fmt::format_to(std::back_inserter(text_), ",\"pid\":{},\"tid\":{}", a.device, track_of(a));
    if (!instant) {
      text_ += ",\"dur\":";
      append_ns_as_us(text_, a.end_ns - a.start_ns);
    }
    fmt::format_to(std::back_inserter(text_), ",\"args\":{{\"device\":{},\"context\":{},\"stream\":{}",
                   a.device, a.context, a.stream);
    if (a.kind != GpuActivityKind::UserAnnotation) {
      fmt::format_to(std::back_inserter(text_), ",\"correlation\":{}", a.correlation);
      if (const uint64_t external = model_.gpu.external_ids[i]) {
        fmt::format_to(std::back_inserter(text_), ",\"External id\":{}", external);
      }
    }
    write_gpu_details(i);
    text_ += "}}";
  }

  void write_gpu_details(size_t i) {
    const GpuActivity& a = model_.gpu.activities[i];
    auto out = std::back_inserter(text_);
    switch (a.kind) {
      case GpuActivityKind::Kernel:
        fmt::format_to(out, R"(,"registers per thread":{},"shared memory":{},"grid":[{},{},{}],"block":[{},{},{}])",
                       a.registers_per_thread, a.static_shared_memory + static_cast<int64_t>(a.dynamic_shared_memory),
                       a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1], a.block[2]);
        if (metrics_.blocks_per_sm[i]) {
          fmt::format_to(out, R"(,"blocks per SM":{:.3f},"warps per SM":{:.3f})", *metrics_.blocks_per_sm[i],
                         *metrics_.warps_per_sm[i]);
        }
        if (metrics_.occupancy_percent[i]) {
          fmt::format_to(out, R"(,"theoretical occupancy %":{:.2f})", *metrics_.occupancy_percent[i]);
        }
        if (a.graph_id != 0) fmt::format_to(out, R"(,"graph id":{})", a.graph_id);  // a node of a CUDA graph
        write_kernel_metrics(i);
        return;
      case GpuActivityKind::Memcpy:
        fmt::format_to(out, R"json(,"bytes":{},"memory bandwidth (GB/s)":{:.3f})json", a.bytes,
                       metrics_.bandwidth_gb_per_s[i].value_or(0.0));
        return;
      case GpuActivityKind::Memset: fmt::format_to(out, R"(,"bytes":{},"value":{})", a.bytes, a.value); return;
      case GpuActivityKind::MemoryAlloc:
      case GpuActivityKind::MemoryFree:
        fmt::format_to(out, R"(,"address":{},"bytes":{},"memory kind":"{}")", a.address, a.bytes,
                       memory_kind_label(a.copy_kind));
        return;
      case GpuActivityKind::GraphLaunch: fmt::format_to(out, R"(,"graph id":{})", a.graph_id); return;
      case GpuActivityKind::Synchronization:
      case GpuActivityKind::UserAnnotation: return;
    }
  }

  // The hardware metrics measured for kernel i, one member per column named as the column is:
  // a column not evaluated for it (NaN) has none, and JSON cannot hold infinities either.
  void write_kernel_metrics(size_t i) {
    const KernelMetricsTable& table = model_.gpu.kernel_metrics;
    const double* values = table.of(i);
    if (values == nullptr) return;
    for (size_t column = 0; column < table.columns.size(); ++column) {
      if (!std::isfinite(values[column])) continue;
      text_ += ',';
      text_ += quoted(table.columns[column]);
      text_ += ':';
      append_json_number(text_, values[column]);
    }
  }

  // An arrow from each CUDA API call to the GPU work it launched ("ac2g", as torch writes it).
  void write_flows() {
    std::unordered_map<uint32_t, size_t> first_activity;
    for (size_t i = 0; i < model_.gpu.activities.size(); ++i) {
      const GpuActivity& a = model_.gpu.activities[i];
      if (a.kind != GpuActivityKind::UserAnnotation && a.correlation != 0) first_activity.emplace(a.correlation, i);
    }
    const RangeTable& r = model_.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.correlation[i] == 0) continue;
      const auto found = first_activity.find(r.correlation[i]);
      if (found == first_activity.end()) continue;
      const GpuActivity& a = model_.gpu.activities[found->second];
      begin_event("s", r.begin_ns[i]);
      fmt::format_to(std::back_inserter(text_), R"("cat":"ac2g","name":"ac2g","id":{},{})", r.correlation[i],
                     track_ids_[r.track[i]]);
      text_ += '}';
      begin_event("f", a.start_ns);
      fmt::format_to(std::back_inserter(text_), R"("cat":"ac2g","name":"ac2g","id":{},"bp":"e","pid":{},"tid":{}}})",
                     r.correlation[i], a.device, a.stream);
    }
  }

  // An arrow from each forward operator to the backward operator autograd ran for it ("fwdbwd",
  // as torch writes it), ids counted from 1.
  void write_forward_backward_flows() {
    const RangeTable& r = model_.ranges;
    for (size_t l = 0; l < model_.forward_backward.size(); ++l) {
      const ForwardBackwardLink& link = model_.forward_backward[l];
      const uint64_t id = forward_backward_flow_id(l);
      begin_event("s", r.begin_ns[link.forward]);
      fmt::format_to(std::back_inserter(text_), R"("cat":"fwdbwd","name":"fwdbwd","id":{},{}}})", id,
                     track_ids_[r.track[link.forward]]);
      begin_event("f", r.begin_ns[link.backward]);
      fmt::format_to(std::back_inserter(text_), R"("cat":"fwdbwd","name":"fwdbwd","id":{},"bp":"e",{}}})", id,
                     track_ids_[r.track[link.backward]]);
    }
  }

  void write_device_properties() {
    text_ += '[';
    const char* separator = "";
    for (const GpuDevice& d : model_.gpu.devices) {
      text_ += separator;
      separator = ", ";
      text_ += "{\"id\":";
      append_int(text_, d.id);
      text_ += ",\"name\":";
      append_json_string(text_, d.name);
      fmt::format_to(std::back_inserter(text_),
                     R"(,"totalGlobalMem":{},"computeMajor":{},"computeMinor":{},"maxThreadsPerBlock":{},)"
                     R"("maxThreadsPerMultiprocessor":{},"regsPerBlock":{},"regsPerMultiprocessor":{},"warpSize":{},)"
                     R"("sharedMemPerBlock":{},"sharedMemPerMultiprocessor":{},"numSms":{},"sharedMemPerBlockOptin":{}}})",
                     d.global_memory_bytes, d.compute_major, d.compute_minor, d.max_threads_per_block,
                     d.max_warps_per_sm * d.warp_size, d.max_registers_per_block, d.max_registers_per_sm, d.warp_size,
                     d.max_shared_memory_per_block, d.max_shared_memory_per_sm, d.sm_count,
                     d.max_shared_memory_per_block);
    }
    text_ += ']';
  }

  // Each distinct string is escaped once per export, however many events use it.
  const std::string& quoted(StringId id) {
    std::string& cached = quoted_[id];
    if (cached.empty()) append_json_string(cached, model_.str(id));
    return cached;
  }

  // Each distinct argument set is written once per export.
  const std::string& arg_members(ArgSetId id) {
    std::string& cached = arg_members_[index_of(id)];
    if (cached.empty()) cached = arg_members_json(model_.args(id), model_);
    return cached;
  }

  void flush() {
    file_.write(text_);
    text_.clear();
  }

  const TraceModel& model_;
  const OpTree& tree_;
  const GpuMetrics& metrics_;
  OutputFile& file_;
  std::string text_;
  std::vector<std::string> quoted_;
  std::vector<std::string> arg_members_;  // by ArgSetId, as arg_members_json writes them
  std::vector<std::string> track_ids_;
  const std::vector<uint32_t> python_ids_;  // per range: "Python id" of a Python frame, else 0
  size_t args_begin_ = 0;                   // where the members of the args being written begin
  bool first_event_ = true;
};

}  // namespace

void write_chrome_trace(const AnalysedTrace& trace, const std::string& path, const ChromeTraceOptions& options) {
  OutputFile file(path, options.gzip_level);
  ChromeTraceWriter(trace, file).write(path, options);
  file.commit();
}

}  // namespace perfprof
