#include "export/chrome_trace.h"

#include <string_view>

#include "export/json_text.h"
#include "export/output_file.h"

namespace perfprof {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const TraceModel& model, OutputFile& file)
      : model_(model), file_(file), quoted_(model.strings.size()) {
    text_.reserve(kFlushBytes + (64 << 10));
    for (const ThreadTrack& thread : model.threads) {
      std::string ids = "\"pid\":";
      append_int(ids, model.pid);
      ids += ",\"tid\":";
      append_int(ids, thread.os_tid);
      track_ids_.push_back(std::move(ids));
    }
  }

  void write(const std::string& path, const ChromeTraceOptions& options) {
    write_header(options);
    write_process_metadata();
    for (size_t i = 0; i < model_.ranges.size(); ++i) write_range(i);
    for (size_t i = 0; i < model_.instants.size(); ++i) write_instant(i);
    for (size_t i = 0; i < model_.counters.size(); ++i) write_counter(i);
    text_ += "\n  ],\n  \"traceName\": ";
    append_json_string(text_, path);
    text_ += "\n}\n";
    flush();
  }

 private:
  void write_header(const ChromeTraceOptions& options) {
    text_ += "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ";
    text_ += options.device_properties_json;
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
    const TraceStats& s = model_.stats;
    const std::pair<const char*, uint64_t> counts[] = {
        {"dropped_events", s.dropped_events},
        {"unmatched_range_ends", s.unmatched_range_ends},
        {"unfinished_ranges", s.unfinished_ranges},
        {"async_ranges", s.async_ranges},
        {"events_before_window", s.events_before_window},
    };
    text_ += "  \"perfprofStats\": {";
    const char* separator = "";
    for (const auto& [name, value] : counts) {
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
    const bool unfinished = r.flags[i] & kRangeUnfinished;
    if (!(r.flags[i] & kRangeAsync)) {
      begin_event("X", r.begin_ns[i]);
      write_identity(r.category[i], r.name[i], r.track[i]);
      text_ += ",\"dur\":";
      append_ns_as_us(text_, r.end_ns[i] - r.begin_ns[i]);
      write_args(r.args[i], unfinished);
      text_ += '}';
      return;
    }
    // Async slices pair by category and id; they may begin and end on different threads.
    begin_event("b", r.begin_ns[i]);
    write_identity(r.category[i], r.name[i], r.track[i]);
    write_async_id(r.id[i]);
    write_args(r.args[i], unfinished);
    text_ += '}';
    begin_event("e", r.end_ns[i]);
    write_identity(r.category[i], r.name[i], r.end_track[i]);
    write_async_id(r.id[i]);
    text_ += '}';
  }

  void write_instant(size_t i) {
    const InstantTable& t = model_.instants;
    begin_event("i", t.ts_ns[i]);
    text_ += "\"s\":\"t\",";
    write_identity(t.category[i], t.name[i], t.track[i]);
    write_args(t.args[i], false);
    text_ += '}';
  }

  void write_counter(size_t i) {
    const CounterTable& t = model_.counters;
    begin_event("C", t.ts_ns[i]);
    text_ += "\"name\":";
    text_ += quoted(t.name[i]);
    text_ += ",\"pid\":";
    append_int(text_, model_.pid);
    text_ += ",\"args\":{\"value\":";
    append_json_number(text_, t.value[i]);
    text_ += "}}";
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

  void write_identity(StringId category, StringId name, uint32_t track) {
    text_ += "\"cat\":";
    text_ += quoted(category);
    text_ += ",\"name\":";
    text_ += quoted(name);
    text_ += ',';
    text_ += track_ids_[track];
  }

  void write_async_id(uint64_t id) { fmt::format_to(std::back_inserter(text_), ",\"id\":\"0x{:x}\"", id); }

  void write_args(StringId args, bool unfinished) {
    if (args == kEmptyString && !unfinished) return;
    text_ += ",\"args\":{";
    text_ += model_.str(args);
    if (unfinished) text_ += args == kEmptyString ? "\"unfinished\":true" : ",\"unfinished\":true";
    text_ += '}';
  }

  // Each distinct string is escaped once per export, however many events use it.
  const std::string& quoted(StringId id) {
    std::string& cached = quoted_[id];
    if (cached.empty()) append_json_string(cached, model_.str(id));
    return cached;
  }

  void flush() {
    file_.write(text_);
    text_.clear();
  }

  const TraceModel& model_;
  OutputFile& file_;
  std::string text_;
  std::vector<std::string> quoted_;
  std::vector<std::string> track_ids_;
  bool first_event_ = true;
};

}  // namespace

void write_chrome_trace(const TraceModel& model, const std::string& path,
                        const ChromeTraceOptions& options) {
  OutputFile file(path, options.gzip_level);
  ChromeTraceWriter(model, file).write(path, options);
  file.commit();
}

}  // namespace perfprof
