#include "import/trace_import.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "capture/capture.h"
#include "common/json_text.h"
#include "trace/trace_builder.h"

namespace perfprof {
namespace {

using Type = JsonValue::Type;

// One item of "traceEvents", as read: the fields every Chrome trace event may have. Reused from
// event to event (its strings keep their room).
struct Event {
  std::string ph, cat, name, id;
  int64_t pid = 0, tid = 0;
  bool pid_numeric = false, tid_numeric = false, has_tid = false;
  bool has_ts = false, has_dur = false;
  int64_t ts_ns = 0, dur_ns = 0;
  JsonValue args;  // Object, or Null when the event has none

  void clear() {
    ph.clear();
    cat.clear();
    name.clear();
    id.clear();
    pid = tid = ts_ns = dur_ns = 0;
    pid_numeric = tid_numeric = has_tid = has_ts = has_dur = false;
    args.type = Type::Null;
    args.items.clear();
    args.keys.clear();
  }
};

// CUPTI's copy kinds by the code in a memcpy's name ("Memcpy HtoD (Pageable -> Device)"), as
// cupti/activity_decoder names them.
uint8_t copy_kind_of(std::string_view name) {
  static constexpr std::pair<std::string_view, uint8_t> kKinds[] = {
      {"HtoD", 1}, {"DtoH", 2}, {"HtoA", 3}, {"AtoH", 4}, {"AtoA", 5},
      {"AtoD", 6}, {"DtoA", 7}, {"DtoD", 8}, {"HtoH", 9}, {"PtoP", 10}};
  constexpr std::string_view kPrefix = "Memcpy ";
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  const std::string_view code = name.substr(kPrefix.size(), 4);
  for (const auto& [text, kind] : kKinds) {
    if (code == text) return kind;
  }
  return 0;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// The GPU activity kind of a Chrome trace category, as chrome_trace.cpp and Kineto write them.
bool gpu_kind_of(std::string_view cat, GpuActivityKind& kind) {
  static constexpr std::pair<std::string_view, GpuActivityKind> kKinds[] = {
      {"kernel", GpuActivityKind::Kernel},       {"gpu_memcpy", GpuActivityKind::Memcpy},
      {"gpu_memset", GpuActivityKind::Memset},   {"cuda_sync", GpuActivityKind::Synchronization},
      {"cuda_graph", GpuActivityKind::GraphLaunch}, {"gpu_user_annotation", GpuActivityKind::UserAnnotation}};
  for (const auto& [text, value] : kKinds) {
    if (cat == text) {
      kind = value;
      return true;
    }
  }
  return false;
}

// The host range kind of a Chrome trace category (the inverse of category_name), told apart
// further by name and args where one category holds several kinds.
bool range_kind_of(const Event& event, RangeKind& kind) {
  if (event.cat == "cpu_op") {
    kind = RangeKind::CpuOp;
  } else if (event.cat == "user_annotation") {
    kind = starts_with(event.name, kProfilerStepPrefix) ? RangeKind::Step
           : event.args.member("domain") != nullptr     ? RangeKind::Mstx
                                                        : RangeKind::UserAnnotation;
  } else if (event.cat == "python_function") {
    kind = starts_with(event.name, "nn.Module: ") ? RangeKind::Module : RangeKind::PythonFunction;
  } else if (event.cat == "gc") {
    kind = RangeKind::Gc;
  } else if (event.cat == "cuda_runtime") {
    kind = RangeKind::CudaRuntime;
  } else if (event.cat == "cuda_driver") {
    kind = RangeKind::CudaDriver;
  } else {
    return false;
  }
  return true;
}

// A JSON scalar's text as JSON (metadata values are kept as the JSON they were).
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

class TraceImporter {
 public:
  explicit TraceImporter(const std::string& path) : reader_(path) { strings_.emplace_back(); }

  ImportedTrace run() {
    if (reader_.peek() == '[') {  // Chrome's "JSON Array Format": the events alone
      read_events();
    } else {
      read_document();
    }
    reader_.expect_end();
    return finish();
  }

 private:
  // ---- reading --------------------------------------------------------------------------------

  void read_document() {
    JsonReader::Members members = reader_.object();
    std::string key;
    JsonValue value;
    std::string json;
    while (members.next(key)) {
      if (key == "traceEvents") {
        read_events();
        continue;
      }
      reader_.read_value(value);
      if (key == "deviceProperties") {
        read_devices(value);
      } else if (key == "distributedInfo") {
        read_distributed(value);
      } else if (key == "baseTimeNanoseconds") {
        if (value.type != Type::Number || !json_int(value.text, base_time_ns_)) {
          fail_member(key, "is not an integer number of nanoseconds");
        }
      } else if (key == "perfprofStats") {
        read_stats(value);
      } else if (key == "displayTimeUnit") {
        // Chrome's viewers show times in it; "ts" and "dur" are microseconds whatever it says.
        if (value.type != Type::String) fail_member(key, "is not a string");
      } else if (key != "schemaVersion" && key != "traceName" && scalar_json(value, json)) {
        metadata_.emplace_back(key, json);
      }
    }
  }

  [[noreturn]] void fail_member(const std::string& key, std::string_view what) const {
    throw TraceImportError(fmt::format("{}: \"{}\" {}", reader_.path(), key, what));
  }

  void read_events() {
    JsonReader::Items items = reader_.array();
    while (items.next()) {
      event_.clear();
      read_event(event_);
      add_event(event_);
      ++event_index_;
    }
  }

  void read_event(Event& event) {
    JsonReader::Members members = reader_.object();
    while (members.next(key_)) {
      if (key_ == "ph") {
        read_text(event.ph);
      } else if (key_ == "cat") {
        read_text(event.cat);
      } else if (key_ == "name") {
        read_text(event.name);
      } else if (key_ == "pid") {
        event.pid_numeric = read_id(event.pid);
      } else if (key_ == "tid") {
        event.has_tid = true;
        event.tid_numeric = read_id(event.tid);
      } else if (key_ == "ts") {
        event.has_ts = true;
        event.ts_ns = read_us();
      } else if (key_ == "dur") {
        event.has_dur = true;
        event.dur_ns = read_us();
      } else if (key_ == "id") {
        reader_.read_value(scratch_);
        event.id = scratch_.text;
      } else if (key_ == "args") {
        reader_.read_value(event.args);
        if (event.args.type != Type::Object) bad_event("its \"args\" is not an object");
      } else {
        reader_.skip_value();
      }
    }
  }

  void read_text(std::string& out) {
    if (reader_.peek() != '"') bad_event(fmt::format("its \"{}\" is not a string", key_));
    reader_.read_string(out);
  }

  // A pid or tid: a number (true), or a name (false: Kineto's "Spans", "Traces" tracks).
  bool read_id(int64_t& out) {
    reader_.read_value(scratch_);
    if (scratch_.type == Type::String) return false;
    if (scratch_.type != Type::Number || !json_int(scratch_.text, out)) {
      bad_event(fmt::format("its \"{}\" is neither an integer nor a string", key_));
    }
    return true;
  }

  int64_t read_us() {
    if (reader_.peek() == '{' || reader_.peek() == '[') bad_event(fmt::format("its \"{}\" is not a number", key_));
    reader_.read_value(scratch_);
    int64_t ns = 0;
    if (scratch_.type != Type::Number || !json_us_to_ns(scratch_.text, ns)) {
      bad_event(fmt::format("its \"{}\" is not a number of microseconds in range", key_));
    }
    return ns;
  }

  [[noreturn]] void bad_event(std::string_view what) const {
    throw TraceImportError(fmt::format("{}: event {}{}: {}", reader_.path(), event_index_,
                                       event_.name.empty() ? "" : fmt::format(" ({})", event_.name), what));
  }

  void read_devices(const JsonValue& value) {
    if (value.type != Type::Array) fail_member("deviceProperties", "is not an array");
    for (const JsonValue& item : value.items) {
      GpuDevice device;
      const auto number = [&](const char* key, auto& field) {
        using Field = std::remove_reference_t<decltype(field)>;
        const JsonValue* member = item.member(key);
        int64_t n = 0;
        if (member == nullptr) return;
        if (member->type != Type::Number || !json_int(member->text, n) || n < 0 ||
            static_cast<uint64_t>(n) > std::numeric_limits<Field>::max()) {
          fail_member("deviceProperties", fmt::format("has a device whose \"{}\" is not a count in range", key));
        }
        field = static_cast<Field>(n);
      };
      number("id", device.id);
      if (const JsonValue* name = item.member("name"); name != nullptr && name->type == Type::String) {
        device.name = name->text;
      }
      number("totalGlobalMem", device.global_memory_bytes);
      number("computeMajor", device.compute_major);
      number("computeMinor", device.compute_minor);
      number("maxThreadsPerBlock", device.max_threads_per_block);
      number("regsPerBlock", device.max_registers_per_block);
      number("regsPerMultiprocessor", device.max_registers_per_sm);
      number("warpSize", device.warp_size);
      number("sharedMemPerBlock", device.max_shared_memory_per_block);
      number("sharedMemPerMultiprocessor", device.max_shared_memory_per_sm);
      number("numSms", device.sm_count);
      uint32_t threads_per_sm = 0;
      number("maxThreadsPerMultiprocessor", threads_per_sm);
      if (device.warp_size != 0) device.max_warps_per_sm = threads_per_sm / device.warp_size;
      devices_.push_back(std::move(device));
    }
  }

  void read_distributed(const JsonValue& value) {
    if (value.type != Type::Object) fail_member("distributedInfo", "is not an object");
    if (const JsonValue* backend = value.member("backend"); backend != nullptr && backend->type == Type::String) {
      distributed_.backend = backend->text;
    }
    const auto count = [&](const char* key, int64_t& out, int64_t least) {
      const JsonValue* member = value.member(key);
      if (member == nullptr) return;
      if (member->type != Type::Number || !json_int(member->text, out) || out < least) {
        fail_member("distributedInfo", fmt::format("has a \"{}\" that is not an integer >= {}", key, least));
      }
    };
    count("rank", distributed_.rank, 0);
    count("world_size", distributed_.world_size, 1);
    if (distributed_.rank >= distributed_.world_size) {
      fail_member("distributedInfo", fmt::format("has rank {} outside its world_size {}", distributed_.rank,
                                                 distributed_.world_size));
    }
  }

  // perfprof's own counts of what its run lost, so an imported perfprof trace says them too.
  void read_stats(const JsonValue& value) {
    if (value.type != Type::Object) return;
    for (size_t i = 0; i < value.keys.size(); ++i) {
      int64_t n = 0;
      if (value.items[i].type != Type::Number || !json_int(value.items[i].text, n) || n < 0) continue;
      const std::string& key = value.keys[i];
      const auto count = static_cast<uint64_t>(n);
      if (key == "dropped_events") recorded_losses_.dropped_events = count;
      if (key == "gpu_dropped_records") recorded_losses_.gpu_dropped_records = count;
      if (key == "unreadable_torch_events") recorded_losses_.unreadable_torch_events = count;
      if (key == "unreadable_torch_fields") recorded_losses_.unreadable_torch_fields = count;
      if (key == "kernel_metrics_left_out") recorded_losses_.kernel_metrics_left_out = count;
      if (key == "kernel_metrics_unmatched") recorded_losses_.kernel_metrics_unmatched = count;
    }
  }

  // ---- events -------------------------------------------------------------------------------

  void add_event(const Event& event) {
    if (event.ph == "X") {
      add_complete(event);
    } else if (event.ph == "b" || event.ph == "e") {
      add_async(event);
    } else if (event.ph == "i" || event.ph == "I") {
      add_instant(event);
    } else if (event.ph == "C") {
      add_counter(event);
    } else if (event.ph == "M") {
      add_metadata(event);
    } else if (event.ph == "s" || event.ph == "f" || event.ph == "t") {
      // Flows: ac2g repeats the correlation ids in the args of both ends; fwdbwd links operators
      // building finds again from their sequence numbers.
    } else {
      leave_out(event);
    }
  }

  // An event of a kind the model has no place for; named in the notes, counted.
  void leave_out(const Event& event) {
    ++left_out_[fmt::format("'{}' ({})", event.cat.empty() ? event.name : event.cat, event.ph)];
  }

  void need_time(const Event& event, bool duration) const {
    if (!event.has_ts) bad_event("it has no \"ts\"");
    if (duration && !event.has_dur) bad_event("it has no \"dur\"");
  }

  void add_complete(const Event& event) {
    // Kineto's own bookkeeping ("PyTorch Profiler (0)" on a "Spans" track): not the run's work.
    if (!event.pid_numeric || (event.has_tid && !event.tid_numeric)) return;
    need_time(event, true);
    if (event.dur_ns < 0) {
      ++negative_durations_;
      return;
    }
    if (event.dur_ns > std::numeric_limits<int64_t>::max() - event.ts_ns) bad_event("it ends past the clock's range");
    const int64_t end_ns = event.ts_ns + event.dur_ns;
    GpuActivityKind gpu_kind{};
    RangeKind kind{};
    if (gpu_kind_of(event.cat, gpu_kind)) {
      add_gpu_activity(event, gpu_kind, end_ns);
    } else if (!range_kind_of(event, kind)) {
      leave_out(event);
      return;
    } else if (kind == RangeKind::CudaRuntime || kind == RangeKind::CudaDriver) {
      add_api_call(event, kind, end_ns);
    } else {
      add_range(event, kind, event.ts_ns, end_ns);
    }
    widen_window(event.ts_ns, end_ns);
  }

  void add_range(const Event& event, RangeKind kind, int64_t begin_ns, int64_t end_ns) {
    note_host_pid(event.pid);
    CompletedRange range;
    range.os_tid = event.tid;
    range.begin_ns = begin_ns;
    range.end_ns = end_ns;
    range.name = intern(event.name);
    range.kind = kind;
    range.args = args_of(event.args);
    range.sequence = optional_int(event, "Sequence number", -1, -1);
    range.forward_os_tid = optional_int(event, "Fwd thread id", 0, 0);
    if (range.sequence < 0) range.forward_os_tid = 0;
    if (kind == RangeKind::CpuOp) {
      ++operators_;
      if (event.args.member("Input Dims") != nullptr) ++operators_with_shapes_;
    }
    if (kind == RangeKind::Step) ++steps_;
    ranges_.push_back(range);
  }

  void add_api_call(const Event& event, RangeKind kind, int64_t end_ns) {
    note_host_pid(event.pid);
    ApiCall call;
    call.driver = kind == RangeKind::CudaDriver;
    call.cbid = unsigned_arg<uint32_t>(event, "cbid");
    call.name = intern(event.name);
    call.start_ns = event.ts_ns;
    call.end_ns = end_ns;
    call.os_tid = event.tid;
    call.correlation = unsigned_arg<uint32_t>(event, "correlation");
    gpu_.collected.api_calls.push_back(call);
  }

  void add_gpu_activity(const Event& event, GpuActivityKind kind, int64_t end_ns) {
    GpuActivity a;
    a.kind = kind;
    a.start_ns = event.ts_ns;
    a.end_ns = end_ns;
    a.name = intern(event.name);
    a.device = unsigned_arg<uint32_t>(event, "device", static_cast<uint32_t>(std::max<int64_t>(event.pid, 0)));
    a.context = unsigned_arg<uint32_t>(event, "context");
    a.stream = unsigned_arg<uint32_t>(event, "stream", static_cast<uint32_t>(std::max<int64_t>(event.tid, 0)));
    a.correlation = unsigned_arg<uint32_t>(event, "correlation");
    switch (kind) {
      case GpuActivityKind::Kernel:
        dim3_arg(event, "grid", a.grid);
        dim3_arg(event, "block", a.block);
        a.registers_per_thread = unsigned_arg<uint16_t>(event, "registers per thread");
        a.static_shared_memory = static_cast<int32_t>(unsigned_arg<uint32_t>(event, "shared memory") & 0x7fffffff);
        break;
      case GpuActivityKind::Memcpy:
        a.bytes = unsigned_arg<uint64_t>(event, "bytes");
        a.copy_kind = copy_kind_of(event.name);
        break;
      case GpuActivityKind::Memset:
        a.bytes = unsigned_arg<uint64_t>(event, "bytes");
        a.value = unsigned_arg<uint32_t>(event, "value");
        break;
      case GpuActivityKind::GraphLaunch: a.graph_id = unsigned_arg<uint32_t>(event, "graph id"); break;
      default: break;
    }
    gpu_.collected.activities.push_back(a);
    gpu_.collected_any = true;
  }

  // Async slices ("b" then "e", paired by category and id) are ranges of the thread they began on.
  void add_async(const Event& event) {
    if (!event.pid_numeric || !event.tid_numeric) return;
    need_time(event, false);
    RangeKind kind{};
    if (!range_kind_of(event, kind) || kind == RangeKind::CudaRuntime || kind == RangeKind::CudaDriver) {
      leave_out(event);
      return;
    }
    const std::string key = event.cat + '\n' + event.id;
    if (event.ph == "b") {
      if (!open_async_.emplace(key, event).second) bad_event(fmt::format("async slice id {} begins twice", event.id));
      return;
    }
    const auto begin = open_async_.find(key);
    if (begin == open_async_.end()) bad_event(fmt::format("async slice id {} ends without beginning", event.id));
    if (event.ts_ns < begin->second.ts_ns) bad_event(fmt::format("async slice id {} ends before it begins", event.id));
    add_range(begin->second, kind, begin->second.ts_ns, event.ts_ns);
    widen_window(begin->second.ts_ns, event.ts_ns);
    open_async_.erase(begin);
  }

  void add_instant(const Event& event) {
    if (!event.pid_numeric || !event.tid_numeric) return;  // Kineto's global markers
    need_time(event, false);
    if (event.cat == "gpu_memory") {  // a device allocation: its kind (allocation or free) is not written
      leave_out(event);
      return;
    }
    if (event.name == "[memory]") {
      add_allocation(event);
    } else {
      RangeKind kind = RangeKind::Other;
      range_kind_of(event, kind);
      RawEvent raw{};
      raw.ts_ns = event.ts_ns;
      raw.name = intern(event.name);
      raw.args = args_of(event.args);
      raw.kind = EventKind::Instant;
      raw.range_kind = kind;
      thread_events(event.tid).push_back(raw);
    }
    widen_window(event.ts_ns, event.ts_ns);
  }

  // An allocator event, as torch.profiler writes it ("[memory]": Addr, Bytes, totals, device).
  void add_allocation(const Event& event) {
    memory::Allocation a;
    a.time_ns = event.ts_ns;
    a.ptr = unsigned_arg<uint64_t>(event, "Addr");
    a.bytes = int_arg(event, "Bytes");
    a.total_allocated = int_arg(event, "Total Allocated");
    a.total_reserved = int_arg(event, "Total Reserved");
    const int64_t type = int_arg(event, "Device Type");
    const int64_t index = int_arg(event, "Device Id");
    if ((type != 0 && type != 1) || index < -1 || index > std::numeric_limits<int16_t>::max()) {
      ++left_out_["'[memory]' of devices other than CPU and CUDA (i)"];
      return;
    }
    a.device = {static_cast<memory::DeviceType>(type), static_cast<int16_t>(index)};
    a.os_tid = event.tid;
    allocations_.push_back(a);
  }

  // A counter event: one sample per numeric arg. A perfprof sampler's metric is named
  // "<title> (<unit>)" with its instances as args; any other counter is a user's, each arg a
  // series ("value" alone: the counter's own name).
  void add_counter(const Event& event) {
    if (!event.pid_numeric) return;
    need_time(event, false);
    const CounterMetric metric = counter_metric_named(event.name);
    std::vector<RawEvent>& events = thread_events(event.tid_numeric ? event.tid : event.pid);
    for (size_t i = 0; i < event.args.keys.size(); ++i) {
      double value = 0;
      if (event.args.items[i].type != Type::Number || !json_double(event.args.items[i].text, value)) continue;
      const std::string& key = event.args.keys[i];
      RawEvent raw{};
      raw.ts_ns = event.ts_ns;
      raw.kind = EventKind::Counter;
      raw.name = intern(metric != CounterMetric::User ? key
                        : key == "value"              ? event.name
                                                      : fmt::format("{} {}", event.name, key));
      std::memcpy(&raw.payload, &value, sizeof(value));
      set_counter_metric(raw, metric);
      events.push_back(raw);
    }
    widen_window(event.ts_ns, event.ts_ns);
  }

  CounterMetric counter_metric_named(std::string_view name) const {
    for (uint8_t m = 1; m <= kLastCounterMetric; ++m) {
      const CounterMetricInfo info = counter_metric_info(static_cast<CounterMetric>(m));
      if (name == fmt::format("{} ({})", info.title, info.unit)) return static_cast<CounterMetric>(m);
    }
    return CounterMetric::User;
  }

  void add_metadata(const Event& event) {
    if (!event.pid_numeric) return;
    const JsonValue* value = event.args.member(event.name == "process_labels" ? "labels" : "name");
    if (value == nullptr || value->type != Type::String) return;
    if (event.name == "process_name") {
      process_names_[event.pid] = value->text;
    } else if (event.name == "process_labels" && value->text == "CPU") {
      note_host_pid(event.pid);
    } else if (event.name == "thread_name" && event.tid_numeric) {
      thread_names_[{event.pid, event.tid}] = value->text;
    }
  }

  // ---- values -------------------------------------------------------------------------------

  // An arg that must be a non-negative integer fitting `T` when present; `absent` when not.
  template <typename T>
  T unsigned_arg(const Event& event, const char* key, T absent = 0) const {
    const JsonValue* member = event.args.member(key);
    if (member == nullptr || member->type == Type::Null) return absent;
    uint64_t u = 0;
    if (member->type != Type::Number || !json_uint(member->text, u)) {
      bad_event(fmt::format("its \"{}\" is not a non-negative integer", key));
    }
    if (u > std::numeric_limits<T>::max()) bad_event(fmt::format("its \"{}\" ({}) is out of range", key, u));
    return static_cast<T>(u);
  }

  int64_t int_arg(const Event& event, const char* key) const {
    const JsonValue* member = event.args.member(key);
    int64_t n = 0;
    if (member == nullptr || member->type != Type::Number || !json_int(member->text, n)) {
      bad_event(fmt::format("its \"{}\" is missing or not an integer", key));
    }
    return n;
  }

  int64_t optional_int(const Event& event, const char* key, int64_t absent, int64_t least) const {
    const JsonValue* member = event.args.member(key);
    if (member == nullptr) return absent;
    int64_t n = 0;
    if (member->type != Type::Number || !json_int(member->text, n) || n < least) {
      bad_event(fmt::format("its \"{}\" is not an integer >= {}", key, least));
    }
    return n;
  }

  void dim3_arg(const Event& event, const char* key, uint32_t (&out)[3]) const {
    const JsonValue* member = event.args.member(key);
    if (member == nullptr) return;
    int64_t n = 0;
    if (member->type != Type::Array || member->items.size() != 3) bad_event(fmt::format("its \"{}\" is not [x, y, z]", key));
    for (size_t i = 0; i < 3; ++i) {
      const JsonValue& item = member->items[i];
      if (item.type != Type::Number || !json_int(item.text, n) || n < 0 || n > std::numeric_limits<uint32_t>::max()) {
        bad_event(fmt::format("its \"{}\" is not [x, y, z] of counts", key));
      }
      out[i] = static_cast<uint32_t>(n);
    }
  }

  // The args the model types (common/args.h's keys, by the names torch.profiler gives them);
  // the rest are what the model derives again (ids, correlation) or has no place for.
  ArgSetId args_of(const JsonValue& args) {
    if (args.keys.empty()) return kNoArgs;
    ArgSet set;
    for (size_t i = 0; i < args.keys.size(); ++i) {
      for (const ArgKeySpec& spec : kArgKeys) {
        if (spec.name != args.keys[i]) continue;
        if (std::optional<ArgValue> value = typed(spec.type, args.items[i])) set.args.push_back({spec.key, std::move(*value)});
        break;
      }
    }
    return set.empty() ? kNoArgs : arg_sets_.intern(set);
  }

  std::optional<ArgValue> typed(ArgType type, const JsonValue& value) {
    switch (type) {
      case ArgType::Int: {
        int64_t n = 0;
        if (value.type == Type::Number && json_int(value.text, n)) return ArgValue(n);
        return std::nullopt;
      }
      case ArgType::Text:
        if (value.type == Type::String) return ArgValue(intern(value.text));
        return std::nullopt;
      case ArgType::Texts: {
        if (value.type != Type::Array) return std::nullopt;
        std::vector<StringId> texts;
        for (const JsonValue& item : value.items) texts.push_back(item.type == Type::String ? intern(item.text) : kEmptyString);
        return ArgValue(std::move(texts));
      }
      case ArgType::IntTree: {
        IntTree tree;
        if (value.type != Type::Array || !append_tree(value, tree)) return std::nullopt;
        return ArgValue(std::move(tree));
      }
    }
    return std::nullopt;
  }

  // `value` (a list of ints and lists) in preorder; false for anything else in it.
  static bool append_tree(const JsonValue& value, IntTree& tree) {
    if (value.type == Type::Array) {
      tree.push_back({static_cast<int64_t>(value.items.size()), true});
      return std::all_of(value.items.begin(), value.items.end(), [&](const JsonValue& item) { return append_tree(item, tree); });
    }
    int64_t n = 0;
    if (value.type != Type::Number || !json_int(value.text, n)) return false;
    tree.push_back({n, false});
    return true;
  }

  StringId intern(std::string_view text) {
    if (text.empty()) return kEmptyString;
    const auto found = string_ids_.find(text);
    if (found != string_ids_.end()) return found->second;
    const auto id = static_cast<StringId>(strings_.size());
    strings_.emplace_back(text);
    string_ids_.emplace(string_keys_.emplace_back(text), id);
    return id;
  }

  std::vector<RawEvent>& thread_events(int64_t os_tid) { return events_of_thread_[os_tid]; }

  void note_host_pid(int64_t pid) {
    if (!host_pid_) host_pid_ = pid;
  }

  void widen_window(int64_t begin_ns, int64_t end_ns) {
    window_.begin_ns = std::min(window_.begin_ns, begin_ns);
    window_.end_ns = std::max(window_.end_ns, end_ns);
  }

  // ---- the model ----------------------------------------------------------------------------

  ImportedTrace finish() {
    if (!open_async_.empty()) ++left_out_[fmt::format("async slices that never end ({})", open_async_.size())];
    ImportedTrace out;
    out.notes = notes();
    out.model = build_trace(capture());
    add_recorded_losses(out.model.stats);
    out.distributed = std::move(distributed_);
    out.metadata = std::move(metadata_);
    return out;
  }

  Capture capture() {
    Capture capture;
    const int64_t pid = host_pid_.value_or(0);
    capture.process.pid = pid;
    if (const auto name = process_names_.find(pid); name != process_names_.end()) capture.process.name = name->second;
    capture.process.unix_offset_ns = base_time_ns_;
    if (window_.begin_ns > window_.end_ns) window_ = {};  // no timed event at all
    capture.window = window_;
    uint32_t index = 0;
    for (auto& [os_tid, events] : events_of_thread_) {
      std::stable_sort(events.begin(), events.end(), [](const RawEvent& a, const RawEvent& b) { return a.ts_ns < b.ts_ns; });
      capture.host.threads.push_back({index++, os_tid, thread_name(pid, os_tid), std::move(events)});
    }
    for (const auto& [ids, name] : thread_names_) {
      if (ids.first == pid) capture.other_threads.push_back({ids.second, name});
    }
    capture.host.completed = std::move(ranges_);
    capture.host.memory.allocations = std::move(allocations_);
    memory::sort_by_time(capture.host.memory);
    gpu_.collected.devices = std::move(devices_);
    gpu_.collected_any = gpu_.collected_any || !gpu_.collected.api_calls.empty() || !gpu_.collected.devices.empty();
    capture.gpu = std::move(gpu_);
    capture.strings = std::move(strings_);
    capture.arg_sets = arg_sets_.take();
    return capture;
  }

  std::string thread_name(int64_t pid, int64_t os_tid) const {
    const auto found = thread_names_.find({pid, os_tid});
    return found == thread_names_.end() ? fmt::format("thread {}", os_tid) : found->second;
  }

  void add_recorded_losses(TraceStats& stats) const {
    stats.dropped_events += recorded_losses_.dropped_events;
    stats.gpu_dropped_records += recorded_losses_.gpu_dropped_records;
    stats.unreadable_torch_events += recorded_losses_.unreadable_torch_events;
    stats.unreadable_torch_fields += recorded_losses_.unreadable_torch_fields;
    stats.kernel_metrics_left_out += recorded_losses_.kernel_metrics_left_out;
    stats.kernel_metrics_unmatched += recorded_losses_.kernel_metrics_unmatched;
  }

  // One line: what was left out, then what the analyses will find missing.
  std::string notes() const {
    std::vector<std::string> parts;
    if (!left_out_.empty() || negative_durations_ != 0) {
      std::string left = "left out";
      const char* separator = " ";
      for (const auto& [what, count] : left_out_) {
        left += fmt::format("{}{} {}", separator, count, what);
        separator = ", ";
      }
      if (negative_durations_ != 0) left += fmt::format("{}{} events with a negative duration", separator, negative_durations_);
      parts.push_back(std::move(left));
    }
    std::vector<std::string> lacks;
    if (operators_ == 0) lacks.emplace_back("no operators (cpu_op)");
    if (operators_ != 0 && operators_with_shapes_ == 0) lacks.emplace_back("no input shapes (record_shapes)");
    if (steps_ == 0) lacks.emplace_back("no ProfilerStep#N ranges (steps)");
    if (gpu_.collected.activities.empty()) lacks.emplace_back("no GPU activity");
    if (allocations_.empty()) {
      lacks.emplace_back("no memory events (profile_memory)");
    } else {
      lacks.emplace_back("no tensor roles (memory categories read Unknown)");
    }
    parts.push_back("the trace has " + fmt::format("{}", fmt::join(lacks, ", ")));
    return fmt::format("{}", fmt::join(parts, "; "));
  }

  JsonReader reader_;
  Event event_;
  JsonValue scratch_;
  std::string key_;
  uint64_t event_index_ = 0;

  std::vector<std::string> strings_;  // by StringId; 0 is ""
  std::deque<std::string> string_keys_;  // the map's keys' storage: a deque keeps them in place
  std::unordered_map<std::string_view, StringId> string_ids_;
  ArgSetTable arg_sets_;

  std::vector<CompletedRange> ranges_;
  std::map<int64_t, std::vector<RawEvent>> events_of_thread_;  // instants and counters, by OS thread
  std::vector<memory::Allocation> allocations_;
  GpuInput gpu_;
  std::vector<GpuDevice> devices_;
  std::unordered_map<std::string, Event> open_async_;  // "b" events by category and id

  std::optional<int64_t> host_pid_;
  std::map<int64_t, std::string> process_names_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;  // by (pid, tid)
  int64_t base_time_ns_ = 0;
  CollectionWindow window_{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  DistributedInfo distributed_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  TraceStats recorded_losses_;

  std::map<std::string, uint64_t> left_out_;  // by what, for the notes
  uint64_t negative_durations_ = 0;
  uint64_t operators_ = 0;
  uint64_t operators_with_shapes_ = 0;
  uint64_t steps_ = 0;
};

}  // namespace

ImportedTrace import_chrome_trace(const std::string& path) { return TraceImporter(path).run(); }

}  // namespace perfprof
