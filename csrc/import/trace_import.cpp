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
#include "import/trace_event.h"
#include "record/event.h"
#include "trace/trace_builder.h"

namespace perfprof {
namespace {

using Type = JsonValue::Type;

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
        devices_ = devices_of(value, reader_.path());
      } else if (key == "distributedInfo") {
        distributed_ = distributed_of(value, reader_.path());
      } else if (key == "baseTimeNanoseconds") {
        if (value.type != Type::Number || !json_int(value.text, base_time_ns_)) {
          fail_member(reader_.path(), key, "is not an integer number of nanoseconds");
        }
      } else if (key == "perfprofStats") {
        recorded_losses_ = recorded_losses_of(value);
      } else if (key == "displayTimeUnit") {
        // Chrome's viewers show times in it; "ts" and "dur" are microseconds whatever it says.
        if (value.type != Type::String) fail_member(reader_.path(), key, "is not a string");
      } else if (key != "schemaVersion" && key != "traceName" && scalar_json(value, json)) {
        metadata_.emplace_back(key, json);
      }
    }
  }

  void read_events() {
    JsonReader::Items items = reader_.array();
    while (items.next()) {
      event_.clear();
      try {
        read_event(event_);
        add_event(event_);
      } catch (const BadEvent& error) {
        throw TraceImportError(fmt::format("{}: event {}{}: {}", reader_.path(), event_index_,
                                           event_.name.empty() ? "" : fmt::format(" ({})", event_.name), error.what()));
      }
      ++event_index_;
    }
  }

  void read_event(TraceEvent& event) {
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
        if (event.args.type != Type::Object) throw BadEvent("its \"args\" is not an object");
      } else {
        reader_.skip_value();
      }
    }
  }

  void read_text(std::string& out) {
    const char next = reader_.peek();
    if (next != '"' && next != '\0') throw BadEvent(fmt::format("its \"{}\" is not a string", key_));
    reader_.read_string(out);  // at the end of the file: says the file was cut short
  }

  // A pid or tid: a number (true), or a name (false: Kineto's "Spans", "Traces" tracks).
  bool read_id(int64_t& out) {
    reader_.read_value(scratch_);
    if (scratch_.type == Type::String) return false;
    if (scratch_.type != Type::Number || !json_int(scratch_.text, out)) {
      throw BadEvent(fmt::format("its \"{}\" is neither an integer nor a string", key_));
    }
    return true;
  }

  int64_t read_us() {
    if (reader_.peek() == '{' || reader_.peek() == '[') throw BadEvent(fmt::format("its \"{}\" is not a number", key_));
    reader_.read_value(scratch_);
    int64_t ns = 0;
    if (scratch_.type != Type::Number || !json_us_to_ns(scratch_.text, ns)) {
      throw BadEvent(fmt::format("its \"{}\" is not a number of microseconds in range", key_));
    }
    return ns;
  }

  // ---- events -------------------------------------------------------------------------------

  void add_event(const TraceEvent& event) {
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
  void leave_out(const TraceEvent& event) {
    ++left_out_[fmt::format("'{}' ({})", event.cat.empty() ? event.name : event.cat, event.ph)];
  }

  static void need_time(const TraceEvent& event, bool duration) {
    if (!event.has_ts) throw BadEvent("it has no \"ts\"");
    if (duration && !event.has_dur) throw BadEvent("it has no \"dur\"");
  }

  void add_complete(const TraceEvent& event) {
    // Kineto's own bookkeeping ("PyTorch Profiler (0)" on a "Spans" track): not the run's work.
    if (!event.pid_numeric || (event.has_tid && !event.tid_numeric)) return;
    need_time(event, true);
    if (event.dur_ns < 0) {
      ++negative_durations_;
      return;
    }
    if (event.ts_ns > 0 && event.dur_ns > std::numeric_limits<int64_t>::max() - event.ts_ns) {
      throw BadEvent("it ends past the clock's range");
    }
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

  void add_range(const TraceEvent& event, RangeKind kind, int64_t begin_ns, int64_t end_ns) {
    note_host_pid(event.pid);
    CompletedRange range;
    range.os_tid = event.tid;
    range.begin_ns = begin_ns;
    range.end_ns = end_ns;
    range.name = intern(event.name);
    range.kind = kind;
    range.args = args_of(event.args);
    range.sequence = event.optional_int("Sequence number", -1, -1);
    range.forward_os_tid = event.optional_int("Fwd thread id", 0, 0);
    if (range.sequence < 0) range.forward_os_tid = 0;
    if (kind == RangeKind::CpuOp) {
      ++operators_;
      if (event.args.member("Input Dims") != nullptr) ++operators_with_shapes_;
    }
    if (kind == RangeKind::Step) {
      ++steps_;
      if (const JsonValue* tail = event.args.member("step_tail"); tail != nullptr && tail->type == JsonValue::Type::True) {
        add_step_tail(range);
        return;
      }
    }
    ranges_.push_back(range);
  }

  // The ProfilerStep#N range perfprof's trace marks step_tail (the one the profiler stopped in),
  // as the recorder writes it: a begin and an end saying the profiler stopped inside the step,
  // so the builder makes it the run's tail, not a step, as for the run it was written from.
  void add_step_tail(const CompletedRange& range) {
    const uint64_t id = ++step_tail_ids_;
    std::vector<RawEvent>& events = thread_events(range.os_tid);
    events.push_back({range.begin_ns, id, range.name, range.args, EventKind::RangeBegin, RangeKind::Step, {}});
    RawEvent end{range.end_ns, id, kEmptyString, kNoArgs, EventKind::RangeEnd, RangeKind::Step, {}};
    set_step_ended_by_stop(end, true);
    events.push_back(end);
  }

  void add_api_call(const TraceEvent& event, RangeKind kind, int64_t end_ns) {
    note_host_pid(event.pid);
    ApiCall call;
    call.driver = kind == RangeKind::CudaDriver;
    call.cbid = event.unsigned_arg<uint32_t>("cbid");
    call.name = intern(event.name);
    call.start_ns = event.ts_ns;
    call.end_ns = end_ns;
    call.os_tid = event.tid;
    call.correlation = event.unsigned_arg<uint32_t>("correlation");
    gpu_.collected.api_calls.push_back(call);
  }

  void add_gpu_activity(const TraceEvent& event, GpuActivityKind kind, int64_t end_ns) {
    GpuActivity a;
    a.kind = kind;
    a.start_ns = event.ts_ns;
    a.end_ns = end_ns;
    a.name = intern(event.name);
    a.device = event.unsigned_arg<uint32_t>("device", static_cast<uint32_t>(std::max<int64_t>(event.pid, 0)));
    a.context = event.unsigned_arg<uint32_t>("context");
    a.stream = event.unsigned_arg<uint32_t>("stream", static_cast<uint32_t>(std::max<int64_t>(event.tid, 0)));
    a.correlation = event.unsigned_arg<uint32_t>("correlation");
    switch (kind) {
      case GpuActivityKind::Kernel:
        event.dim3_arg("grid", a.grid);
        event.dim3_arg("block", a.block);
        a.registers_per_thread = event.unsigned_arg<uint16_t>("registers per thread");
        a.static_shared_memory = event.unsigned_arg<int32_t>("shared memory");  // static and dynamic, summed
        a.graph_id = event.unsigned_arg<uint32_t>("graph id");  // absent (0) unless a graph's node
        break;
      case GpuActivityKind::Memcpy:
        a.bytes = event.unsigned_arg<uint64_t>("bytes");
        a.copy_kind = copy_kind_of(event.name);
        break;
      case GpuActivityKind::Memset:
        a.bytes = event.unsigned_arg<uint64_t>("bytes");
        a.value = event.unsigned_arg<uint32_t>("value");
        break;
      case GpuActivityKind::GraphLaunch: a.graph_id = event.unsigned_arg<uint32_t>("graph id"); break;
      default: break;
    }
    gpu_.collected.activities.push_back(a);
    gpu_.collected_any = true;
  }

  // Async slices ("b" then "e", paired by category and id) are ranges of the thread they began on.
  void add_async(const TraceEvent& event) {
    if (!event.pid_numeric || !event.tid_numeric) return;
    need_time(event, false);
    RangeKind kind{};
    if (!range_kind_of(event, kind) || kind == RangeKind::CudaRuntime || kind == RangeKind::CudaDriver) {
      leave_out(event);
      return;
    }
    const std::string key = event.cat + '\n' + event.id;
    if (event.ph == "b") {
      if (!open_async_.emplace(key, event).second) throw BadEvent(fmt::format("async slice id {} begins twice", event.id));
      return;
    }
    const auto begin = open_async_.find(key);
    if (begin == open_async_.end()) throw BadEvent(fmt::format("async slice id {} ends without beginning", event.id));
    if (event.ts_ns < begin->second.ts_ns) throw BadEvent(fmt::format("async slice id {} ends before it begins", event.id));
    add_range(begin->second, kind, begin->second.ts_ns, event.ts_ns);
    widen_window(begin->second.ts_ns, event.ts_ns);
    open_async_.erase(begin);
  }

  void add_instant(const TraceEvent& event) {
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
  void add_allocation(const TraceEvent& event) {
    memory::Allocation a;
    a.time_ns = event.ts_ns;
    a.ptr = event.unsigned_arg<uint64_t>("Addr");
    a.bytes = event.int_arg("Bytes");
    a.total_allocated = event.int_arg("Total Allocated");
    a.total_reserved = event.int_arg("Total Reserved");
    const int64_t type = event.int_arg("Device Type");
    const int64_t index = event.int_arg("Device Id");
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
  void add_counter(const TraceEvent& event) {
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

  void add_metadata(const TraceEvent& event) {
    // perfprof stamps its metadata events with the collection's start: the window begins there,
    // not at the first event (step_statistics' startup_ns). Kineto stamps them later than its
    // first events, so this changes nothing for its traces.
    if (event.has_ts) window_.begin_ns = std::min(window_.begin_ns, event.ts_ns);
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
    if (!open_async_.empty()) left_out_["async slices that never end (b)"] += open_async_.size();
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
    stats.gpu_records_outside_window += recorded_losses_.gpu_records_outside_window;
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
  TraceEvent event_;
  JsonValue scratch_;
  std::string key_;
  uint64_t event_index_ = 0;

  std::vector<std::string> strings_;  // by StringId; 0 is ""
  std::deque<std::string> string_keys_;  // the map's keys' storage: a deque keeps them in place
  std::unordered_map<std::string_view, StringId> string_ids_;
  ArgSetTable arg_sets_;

  std::vector<CompletedRange> ranges_;
  uint64_t step_tail_ids_ = 0;  // range ids of the step tails' begin and end events
  std::map<int64_t, std::vector<RawEvent>> events_of_thread_;  // instants and counters, by OS thread
  std::vector<memory::Allocation> allocations_;
  GpuInput gpu_;
  std::vector<GpuDevice> devices_;
  std::unordered_map<std::string, TraceEvent> open_async_;  // "b" events by category and id

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
