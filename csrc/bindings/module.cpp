// perfprof._core: the C++ core as seen from Python. Hot per-event calls live in fast_calls.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "analysis/analysed_trace.h"
#include "analysis/key_averages.h"
#include "analysis/op_annotations.h"
#include "analysis/profiler_steps.h"
#include "bindings/fast_calls.h"
#include "bindings/user_scope_enter.h"
#include "python_hooks/gc_monitor.h"
#include "python_hooks/module_calls.h"
#include "python_hooks/python_tracer.h"
#include "python_hooks/torch_memory.h"
#include "python_hooks/torch_results.h"
#include "capture/capture_file.h"
#include "capture/capture_lock.h"
#include "capture/capture_stream.h"
#include "capture/session_capture.h"
#include "common/clock.h"
#include "cupti/activity_collector.h"
#include "cupti/cupti_library.h"
#include "cupti/kernel_metrics_collector.h"
#include "cupti/range_profiler.h"
#include "export/chrome_trace.h"
#include "export/exporters.h"
#include "import/trace_import.h"
#include "memory/timeline.h"
#include "mstx/mstx.h"
#include "record/recorder.h"
#include "schedule/schedule.h"
#include "schedule/step_controller.h"
#include "telemetry/nvml_library.h"
#include "telemetry/telemetry_collector.h"
#include "torch_hooks/profiler_stubs.h"
#include "trace/trace_builder.h"

namespace py = pybind11;

namespace perfprof::bindings {
namespace {

ProfilerAction to_action(int value) {
  if (value < 0 || value > static_cast<int>(ProfilerAction::RecordAndSave)) {
    throw std::invalid_argument(fmt::format("not a ProfilerAction value: {}", value));
  }
  return static_cast<ProfilerAction>(value);
}

py::list to_list(const std::vector<Transition>& transitions) {
  py::list out;
  for (Transition t : transitions) out.append(static_cast<int>(t));
  return out;
}

// The Python module's Trace is an AnalysedTrace: copies share it, so exporters running in the
// background keep it alive.
using Trace = AnalysedTrace;

// Runs a file writer without the GIL; its failure becomes an OSError.
template <typename Write>
void run_writer(Write&& write) {
  std::string failure;
  {
    py::gil_scoped_release release;
    try {
      write();
    } catch (const std::exception& error) {
      failure = error.what();
    }
  }
  if (!failure.empty()) {
    PyErr_SetString(PyExc_OSError, failure.c_str());
    throw py::error_already_set();
  }
}

// Writes `trace` through `exporter` without the GIL; a failure becomes an OSError.
void write_with(const Exporter& exporter, const Trace& trace, const std::string& path) {
  run_writer([&] { exporter.write(trace, path); });
}

py::dict stats_of(const TraceModel& m) {
  py::dict stats;
  for (const auto& [name, value] : m.stats.named()) stats[name] = value;
  return stats;
}

py::list ranges_of(const TraceModel& m) {
  const RangeTable& r = m.ranges;
  py::list out;
  for (size_t i = 0; i < r.size(); ++i) {
    out.append(py::make_tuple(m.str(r.name[i]), std::string(category_name(r.kind[i])),
                              m.threads[r.track[i]].os_tid, r.begin_ns[i], r.end_ns[i],
                              m.threads[r.end_track[i]].os_tid, static_cast<int>(r.flags[i])));
  }
  return out;
}

Trace trace_of(Capture capture, bool flops) {
  TraceModel model = build_trace(std::move(capture));
  if (flops) annotate_flops(model);
  return Trace(std::move(model));
}

Trace collect_trace(int64_t window_begin_ns, int64_t window_end_ns, bool with_gpu, bool flops, CaptureStream* stream) {
  py::gil_scoped_release release;
  return trace_of(capture_session(stream, with_gpu, {window_begin_ns, window_end_ns}), flops);
}

// Moves what the recorder holds into the stream's file; false (nothing moved: it stays in
// memory) once the file cannot be written.
bool append_recorded(CaptureStream& stream) {
  py::gil_scoped_release release;
  stream.append_recorded();
  return stream.ok();
}

// A Trace built from a capture file, whether it was complete, why reading stopped if not, and
// the run metadata it holds.
py::tuple read_capture_trace(const std::string& path, bool flops) {
  CaptureReading reading;
  try {
    reading = read_capture_file(path);
  } catch (const CaptureFormatError& error) {
    throw std::invalid_argument(fmt::format("{}: {}", path, error.what()));
  } catch (const std::runtime_error& error) {
    PyErr_SetString(PyExc_OSError, error.what());
    throw py::error_already_set();
  }
  const bool complete = reading.complete;
  std::string problem = std::move(reading.problem);
  py::list metadata;
  for (const RunMetadata& entry : reading.capture.metadata) {
    metadata.append(py::make_tuple(entry.key, entry.json, entry.from_user));
  }
  Trace trace = [&] {
    py::gil_scoped_release release;
    return trace_of(std::move(reading.capture), flops);
  }();
  return py::make_tuple(std::move(trace), complete, std::move(problem), std::move(metadata));
}

py::tuple import_trace(const std::string& path, bool flops) {
  ImportedTrace imported;
  std::string failure;
  {
    py::gil_scoped_release release;
    try {
      imported = import_chrome_trace(path);
      if (flops) annotate_flops(imported.model);
    } catch (const TraceImportError& error) {
      failure = error.what();
    }
  }
  if (!failure.empty()) throw std::invalid_argument(failure);
  const DistributedInfo& distributed = imported.distributed;
  return py::make_tuple(Trace(std::move(imported.model)), std::move(imported.metadata), distributed.rank,
                        distributed.world_size, distributed.backend, std::move(imported.notes));
}

py::dict key_average_fields(const KeyAverageRow& row) {
  py::dict fields;
  fields["name"] = row.name;
  fields["input_shapes"] = row.input_shapes;
  fields["stack"] = row.stack;
  fields["device"] = row.device;
  fields["user_annotation"] = row.user_annotation;
  fields["first_async"] = row.first_async;
  fields["first_nested"] = row.first_nested;
  fields["count"] = row.count;
  fields["cpu_total_ns"] = row.cpu_total_ns;
  fields["self_cpu_ns"] = row.self_cpu_ns;
  fields["device_total_ns"] = row.device_total_ns;
  fields["self_device_ns"] = row.self_device_ns;
  fields["cpu_memory_bytes"] = row.cpu_memory_bytes;
  fields["self_cpu_memory_bytes"] = row.self_cpu_memory_bytes;
  fields["device_memory_bytes"] = row.device_memory_bytes;
  fields["self_device_memory_bytes"] = row.self_device_memory_bytes;
  fields["flops"] = row.flops;
  return fields;
}

py::list key_average_rows(const Trace& trace, bool group_by_input_shape, int group_by_stack_n, bool python_functions) {
  if (group_by_stack_n < 0) throw std::invalid_argument("key_averages: 'group_by_stack_n' must be >= 0");
  std::vector<KeyAverageRow> rows;
  {
    py::gil_scoped_release release;
    rows = key_averages(trace.model(), {group_by_input_shape, group_by_stack_n, python_functions});
  }
  py::list out;
  for (const KeyAverageRow& row : rows) out.append(key_average_fields(row));
  return out;
}

py::list function_event_rows(const Trace& trace, int stack_frames, bool python_functions) {
  if (stack_frames < 0) throw std::invalid_argument("function_events: 'stack_frames' must be >= 0");
  std::vector<FunctionEventRow> events;
  {
    py::gil_scoped_release release;
    events = function_event_list(trace.model(), {true, stack_frames, python_functions});
  }
  // Each distinct argument set as the JSON objects of its events' trace "args" and of its keyword
  // inputs alone (members of "args" too), written once.
  std::unordered_map<ArgSetId, py::tuple> args_json;
  const auto args_of = [&](ArgSetId id) {
    const auto [found, inserted] = args_json.try_emplace(id);
    if (inserted) {
      const ArgSet& set = trace.model().args(id);
      ArgSet keywords;
      if (const auto* pairs = set.find<std::vector<StringId>>(ArgKey::KeywordInputs)) {
        keywords.args.push_back({ArgKey::KeywordInputs, *pairs});
      }
      found->second = py::make_tuple("{" + arg_members_json(set, trace.model()) + "}",
                                     "{" + arg_members_json(keywords, trace.model()) + "}");
    }
    return found->second;
  };
  py::list out;
  for (const FunctionEventRow& event : events) {
    py::dict fields = key_average_fields(event.totals);
    fields["tid"] = event.os_tid;
    fields["begin_ns"] = event.begin_ns;
    fields["end_ns"] = event.end_ns;
    fields["parent"] = event.parent;
    fields["async"] = event.async;
    fields["sequence"] = event.sequence;
    fields["category"] = event.category;
    const py::tuple args = args_of(event.args);
    fields["args"] = args[0];
    fields["kwinputs"] = args[1];
    fields["device_index"] = event.device_index;
    fields["external_id"] = event.external_id;
    fields["python_id"] = event.python_id;
    fields["flow"] = py::make_tuple(event.flow.id, event.flow.type, event.flow.start);
    out.append(std::move(fields));
  }
  return out;
}

memory::Device device_of(int type, int index) {
  return {static_cast<memory::DeviceType>(type), static_cast<int16_t>(index)};
}

py::list memory_devices_of(const Trace& trace) {
  py::list devices;
  for (const memory::Device& device : memory::devices_with_memory(trace.model().memory.events)) {
    devices.append(py::make_tuple(device.name(), static_cast<int>(device.type), device.index));
  }
  return devices;
}

py::tuple memory_timeline_of(const Trace& trace, int device_type, int device_index) {
  memory::MemoryTimeline timeline;
  {
    py::gil_scoped_release release;
    timeline = trace.memory_timeline(device_of(device_type, device_index));
  }
  py::list sizes;
  for (const memory::CategoryBytes& bytes : timeline.bytes) sizes.append(py::cast(std::vector<int64_t>(bytes.begin(), bytes.end())));
  return py::make_tuple(py::cast(timeline.times_us), sizes, timeline.max_allocated, timeline.max_reserved);
}

// format: "json" ([times, sizes]), "raw" (changes) or "html" (the plot).
void export_memory_timeline(const Trace& trace, const std::string& path, int device_type, int device_index,
                            const std::string& format, const std::string& title) {
  static const std::unordered_map<std::string, MemoryTimelineFormat> formats{
      {"json", MemoryTimelineFormat::Json}, {"raw", MemoryTimelineFormat::Raw}, {"html", MemoryTimelineFormat::Html}};
  const auto found = formats.find(format);
  if (found == formats.end()) throw std::invalid_argument("unknown format " + format);
  write_with(MemoryTimelineExporter(device_of(device_type, device_index), found->second, title), trace, path);
}

void export_memory_tables(const Trace& trace, const std::string& record_path, const std::string& operator_path) {
  write_with(MemoryRecordCsvExporter(), trace, record_path);
  write_with(OperatorMemoryCsvExporter(), trace, operator_path);
}

// Every summary table the trace has data for, as CSV files in `directory`; their file names.
std::vector<std::string> export_summaries(const Trace& trace, const std::string& directory) {
  std::vector<std::string> written;
  for (SummaryTable table : kSummaryTables) {
    if (!has_summary(trace, table)) continue;
    const std::string name(summary_file_name(table));
    write_with(SummaryCsvExporter(table), trace, directory + "/" + name);
    written.push_back(name);
  }
  return written;
}

void export_folded_stacks(const Trace& trace, const std::string& path, bool device_metric) {
  write_with(FoldedStacksExporter(device_metric ? FoldedMetric::SelfDevice : FoldedMetric::SelfCpu), trace, path);
}

py::dict status_dict(const CuptiStatus& status) {
  py::dict out;
  out["available"] = status.available;
  out["library"] = status.library.empty() ? py::object(py::none()) : py::object(py::str(status.library));
  out["version"] = status.version;
  out["devices"] = status.devices;
  out["reason"] = status.reason;
  out["tried"] = status.tried;
  return out;
}

const char* gpu_kind_name(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::Kernel: return "kernel";
    case GpuActivityKind::Memcpy: return "memcpy";
    case GpuActivityKind::Memset: return "memset";
    case GpuActivityKind::Synchronization: return "synchronization";
    case GpuActivityKind::MemoryAlloc: return "memory_alloc";
    case GpuActivityKind::MemoryFree: return "memory_free";
    case GpuActivityKind::GraphLaunch: return "graph_launch";
    case GpuActivityKind::UserAnnotation: return "user_annotation";
  }
  return "unknown";
}

py::list gpu_activities_of(const TraceModel& m) {
  py::list out;
  for (size_t i = 0; i < m.gpu.activities.size(); ++i) {
    const GpuActivity& a = m.gpu.activities[i];
    py::dict row;
    row["kind"] = gpu_kind_name(a.kind);
    row["name"] = m.str(a.name);
    row["start_ns"] = a.start_ns;
    row["end_ns"] = a.end_ns;
    row["device"] = a.device;
    row["stream"] = a.stream;
    row["correlation"] = a.correlation;
    row["external_id"] = m.gpu.external_ids[i];
    py::dict metrics;
    if (const double* values = m.gpu.kernel_metrics.of(i)) {
      for (size_t c = 0; c < m.gpu.kernel_metrics.columns.size(); ++c) {
        if (!std::isnan(values[c])) metrics[py::str(m.str(m.gpu.kernel_metrics.columns[c]))] = values[c];
      }
    }
    row["metrics"] = std::move(metrics);
    out.append(std::move(row));
  }
  return out;
}

}  // namespace
}  // namespace perfprof::bindings

PYBIND11_MODULE(_core, m) {
  using namespace perfprof;
  using namespace perfprof::bindings;
  using namespace perfprof::python_hooks;
  m.doc() = "perfprof C++ core: recorder, schedule, trace model and exporters.";

  m.attr("CHANNEL_STEPS") = static_cast<uint32_t>(kChannelSteps);
  m.attr("CHANNEL_USER_ANNOTATIONS") = static_cast<uint32_t>(kChannelUserAnnotations);
  m.attr("CHANNEL_MSTX") = static_cast<uint32_t>(kChannelMstx);
  m.attr("CHANNEL_COUNTERS") = static_cast<uint32_t>(kChannelCounters);
  m.attr("CHANNEL_OPERATORS") = static_cast<uint32_t>(kChannelOperators);
  m.attr("CHANNEL_PYTHON") = static_cast<uint32_t>(kChannelPython);
  m.attr("CHANNEL_GC") = static_cast<uint32_t>(kChannelGc);
  m.attr("TRANSITION_PREPARE_TRACE") = static_cast<int>(Transition::PrepareTrace);
  m.attr("TRANSITION_START_TRACE") = static_cast<int>(Transition::StartTrace);
  m.attr("TRANSITION_STOP_TRACE") = static_cast<int>(Transition::StopTrace);
  m.attr("TRANSITION_TRACE_READY") = static_cast<int>(Transition::TraceReady);
  m.attr("TRANSITION_WARN_INCORRECT_SCHEDULE") = static_cast<int>(Transition::WarnIncorrectSchedule);
  m.attr("RANGE_UNFINISHED") = static_cast<int>(kRangeUnfinished);
  m.attr("RANGE_ASYNC") = static_cast<int>(kRangeAsync);

  py::class_<Schedule>(m, "Schedule")
      .def(py::init([](int64_t wait, int64_t active, int64_t warmup, int64_t repeat,
                       int64_t skip_first, int64_t skip_first_wait) {
             return Schedule({wait, active, warmup, repeat, skip_first, skip_first_wait});
           }),
           py::arg("wait"), py::arg("active"), py::arg("warmup"), py::arg("repeat"),
           py::arg("skip_first"), py::arg("skip_first_wait"))
      .def("action_at", [](const Schedule& s, int64_t step) { return static_cast<int>(s.action_at(step)); },
           py::arg("step"))
      .def("describe", &Schedule::describe);

  py::class_<StepController>(m, "StepController")
      .def(py::init<>())
      .def("start", [](StepController& c, int first) { return to_list(c.start(to_action(first))); }, py::arg("first"))
      .def("advance", [](StepController& c, int next) { return to_list(c.advance(to_action(next))); }, py::arg("next"))
      .def("stop", [](StepController& c) { return to_list(c.stop()); })
      .def_property("step", &StepController::step, &StepController::set_step)
      .def_property_readonly("current", [](const StepController& c) { return static_cast<int>(c.current()); })
      .def_property_readonly("previous", [](const StepController& c) { return static_cast<int>(c.previous()); });

  py::class_<Trace>(m, "Trace")
      .def_property_readonly("window_begin_ns", [](const Trace& t) { return t.model().window_begin_ns; })
      .def_property_readonly("window_end_ns", [](const Trace& t) { return t.model().window_end_ns; })
      .def_property_readonly("unix_offset_ns", [](const Trace& t) { return t.model().unix_offset_ns; })
      .def_property_readonly("stats", [](const Trace& t) { return stats_of(t.model()); })
      .def_property_readonly("num_ranges", [](const Trace& t) { return t.model().ranges.size(); })
      .def_property_readonly("num_instants", [](const Trace& t) { return t.model().instants.size(); })
      .def_property_readonly("num_counters", [](const Trace& t) { return t.model().counters.size(); })
      .def_property_readonly("thread_names", [](const Trace& t) {
        py::dict names;
        for (const ThreadTrack& thread : t.model().threads) names[py::int_(thread.os_tid)] = thread.name;
        return names;
      })
      .def("steps",
           [](const Trace& t) {
             py::list steps;
             for (const ProfilerStep& step : profiler_step_ranges(t.model())) {
               steps.append(py::make_tuple(step.number, step.finished));
             }
             return steps;
           },
           "(N, finished) for each ProfilerStep#N range, in order, the tail the profiler stopped in\n"
           "included; a range is unfinished when it was still running as recording ended (a capture\n"
           "cut short).")
      .def("ranges", [](const Trace& t) { return ranges_of(t.model()); },
           "List of (name, category, tid, begin_ns, end_ns, end_tid, flags) tuples.")
      .def("gpu_activities", [](const Trace& t) { return gpu_activities_of(t.model()); },
           "GPU activities as dicts (kind, name, start_ns, end_ns, device, stream, correlation, external_id).")
      .def("key_averages", &key_average_rows, py::arg("group_by_input_shape") = false,
           py::arg("group_by_stack_n") = 0, py::arg("python_functions") = true,
           "Rows as dicts of the KeyAverageRow fields (analysis/key_averages.h), one per distinct\n"
           "key, in torch.profiler's order.")
      .def("function_events", &function_event_rows, py::arg("stack_frames") = 0, py::arg("python_functions") = true,
           "torch.profiler's events one by one, in its order: dicts of the KeyAverageRow fields (count\n"
           "1, input shapes, the innermost stack_frames Python frames) and tid, begin_ns, end_ns,\n"
           "parent (index in the list, -1 for none), async, sequence (-1 for none), and as the Chrome\n"
           "trace writes the event: category, args and kwinputs (JSON objects), device_index, external_id,\n"
           "python_id (-1 for none) and flow (id, type, start: (0, 0, False) for none).")
      .def("export_stacks", &export_folded_stacks, py::arg("path"), py::arg("device_metric") = false,
           "Write self times per stack in the folded format FlameGraph and speedscope read.")
      .def_property_readonly("num_memory_events", [](const Trace& t) { return t.model().memory.events.allocations.size(); })
      .def("memory_devices", &memory_devices_of, "(name, device_type, device_index) of each device with allocator events.")
      .def("memory_timeline", &memory_timeline_of, py::arg("device_type"), py::arg("device_index"),
           "(times_us, sizes, max_allocated, max_reserved): sizes[i] holds bytes per category\n"
           "(MEMORY_CATEGORIES order) from times_us[i] on.")
      .def("export_memory_timeline", &export_memory_timeline, py::arg("path"), py::arg("device_type"),
           py::arg("device_index"), py::arg("format"), py::arg("title") = "",
           "Write the memory timeline of a device: format 'json', 'raw' or 'html'.")
      .def("export_memory_tables", &export_memory_tables, py::arg("record_path"), py::arg("operator_path"),
           "Write memory_record.csv and operator_memory.csv.")
      .def("export_summaries", &export_summaries, py::arg("output_dir"),
           "Write the summary tables the trace has data for (kernel_details.csv, operator_details.csv,\n"
           "op_statistic.csv, api_statistic.csv, step_trace_time.csv, data_preprocess.csv) into\n"
           "output_dir; returns the names of the files written.")
      .def_property_readonly("gpu_collected", [](const Trace& t) { return t.model().gpu.collected; })
      .def_property_readonly("gpu_devices", [](const Trace& t) {
        py::list devices;
        for (const GpuDevice& d : t.model().gpu.devices) {
          devices.append(py::dict(py::arg("id") = d.id, py::arg("name") = d.name, py::arg("sm_count") = d.sm_count,
                                  py::arg("global_memory_bytes") = d.global_memory_bytes,
                                  py::arg("compute_capability") = py::make_tuple(d.compute_major, d.compute_minor)));
        }
        return devices;
      })
      .def("export_chrome_trace",
           [](const Trace& t, const std::string& path,
              std::vector<std::pair<std::string, std::string>> metadata, int rank, int world_size,
              std::string backend) {
             ChromeTraceOptions options;
             options.metadata = std::move(metadata);
             options.rank = rank;
             options.world_size = world_size;
             options.distributed_backend = std::move(backend);
             write_with(ChromeTraceExporter(std::move(options)), t, path);
           },
           py::arg("path"), py::arg("metadata"), py::arg("rank") = 0, py::arg("world_size") = 1,
           py::arg("backend") = "")
      .def("export_database",
           [](const Trace& t, const std::string& path, std::vector<std::pair<std::string, std::string>> metadata,
              int rank, int world_size, std::string backend) {
             db::DatabaseOptions options;
             options.metadata = std::move(metadata);
             options.rank = rank;
             options.world_size = world_size;
             options.distributed_backend = std::move(backend);
             write_with(DatabaseExporter(std::move(options)), t, path);
           },
           py::arg("path"), py::arg("metadata"), py::arg("rank") = 0, py::arg("world_size") = 1,
           py::arg("backend") = "",
           "Write the run database (SQLite, docs/formats/database.md); `metadata` are META_DATA\n"
           "(name, value) rows after perfprof's own.");

  add_torch_memory(m);
  m.def("now_ns", &now_ns, "The recorder's clock (CLOCK_MONOTONIC) in nanoseconds.");
  m.def("set_channels", [](uint32_t mask) { Recorder::instance().set_channels(mask); }, py::arg("mask"));
  m.def("channels", [] { return Recorder::instance().channels(); });
  m.def("buffered_events", [] { return Recorder::instance().buffered_events(); },
        "Events the recorder's thread buffers hold, not collected yet.");
  m.def("discard", [] {
    py::gil_scoped_release release;
    Recorder::instance().discard();
  }, "Drop everything recorded so far (its room is given back to the event limit).");
  m.def("set_event_limit", [](uint64_t events) { Recorder::instance().set_event_limit(events); },
        py::arg("events"),
        "The most events the recorder may hold for the session from now on; beyond it they are\n"
        "dropped and counted.");
  m.def("event_limit_reached", [] { return Recorder::instance().event_limit_reached(); },
        "Whether events were dropped at the event limit since it was last set or refilled.");
  m.attr("EVENT_BYTES") = sizeof(RawEvent);
  py::class_<CaptureStream>(m, "CaptureStream",
                            "A session's capture file, written while the session records\n"
                            "(docs/formats/capture.md).")
      .def(py::init<std::string>(), py::arg("path"), "Create the capture file at path.")
      .def("append_recorded", &append_recorded,
           "Move everything the recorder holds into the file. Returns False, moving nothing, once\n"
           "the file cannot be written (error says why).")
      .def("add_metadata",
           [](CaptureStream& stream, std::string key, std::string json, bool from_user) {
             py::gil_scoped_release release;
             stream.add_metadata({std::move(key), std::move(json), from_user});
           },
           py::arg("key"), py::arg("json"), py::arg("from_user"),
           "Append run metadata: a JSON value's text under key, added by the user (add_metadata)\n"
           "or by perfprof (its configuration). Written at once.")
      .def("start_flushing", &CaptureStream::start_flushing, py::arg("cap_bytes"),
           "Append what the recorder holds whenever its buffers hold more than half of cap_bytes\n"
           "(from a thread of the stream's), until the capture is finished.")
      .def_property_readonly("cap_flushes", &CaptureStream::cap_flushes)
      .def_property_readonly("ok", &CaptureStream::ok)
      .def_property_readonly("error", &CaptureStream::error)
      .def_property_readonly("path", &CaptureStream::path)
      .def_property_readonly("events_appended", &CaptureStream::events_appended)
      .def_property_readonly("removed", &CaptureStream::removed,
                             "Whether the file was removed from its path while written (its events are read\n"
                             "back from the open file).")
      .def_property_readonly("events_held_back", &CaptureStream::events_held_back,
                             "Host events the file lacks because it could not take them (the trace has them).");
  m.def("collect", &collect_trace, py::arg("window_begin_ns"), py::arg("window_end_ns"),
        py::arg("with_gpu") = false, py::arg("flops") = false, py::arg("stream") = nullptr,
        "Move everything recorded so far (and GPU activity) into a Trace; operators get their\n"
        "FLOPs if asked. With a stream, the trace is built from what its file holds and what is\n"
        "left in memory, and the file is ended.");
  m.def("read_capture", &read_capture_trace, py::arg("path"), py::arg("flops") = false,
        "Build a Trace from a capture file: returns (trace, complete, problem, metadata). complete\n"
        "is False for a capture cut short (the process stopped while recording), problem says\n"
        "where; metadata lists the run metadata it holds as (key, json, from_user) tuples.\n"
        "Raises ValueError when the file is not a capture this perfprof reads, OSError when it\n"
        "cannot be read.");
  m.def("capture_writer_pid", [](const std::string& path) { return static_cast<int64_t>(capture_writer_pid(path)); },
        py::arg("path"),
        "The pid of the live process writing the capture at path (it holds the capture's writer\n"
        "lock until it ends the capture; the lock dies with the process), or 0 when none does.");
  m.def("import_trace", &import_trace, py::arg("path"), py::arg("flops") = false,
        "Build a Trace from a Chrome trace (torch.profiler's, Kineto's or perfprof's; .json or\n"
        ".json.gz), read in one streaming pass: returns (trace, metadata, rank, world_size, backend,\n"
        "notes). metadata lists the trace's top-level scalar members as (name, json) tuples; notes\n"
        "is one line saying what was left out and what the trace lacks. Raises ValueError, naming\n"
        "the file and what was wrong, for a file that cannot be read or is not such a trace.");
  m.def("cupti_load", [](const std::string& explicit_path, const std::vector<std::string>& candidates,
                         const std::string& driver_library) {
    CuptiStatus status;
    {
      py::gil_scoped_release release;
      status = CuptiLibrary::instance().load(explicit_path, candidates, driver_library);
    }
    return status_dict(status);
  }, py::arg("explicit_path"), py::arg("candidates"), py::arg("driver_library"),
  "Load libcupti once and probe the CUDA driver; returns the status.");
  m.def("cupti_status", [] { return status_dict(CuptiLibrary::instance().status()); });
  m.def("gpu_start", [](int level, std::vector<std::string> left_out) {
    if (level < 0 || level > static_cast<int>(GpuLevel::Level2)) throw std::invalid_argument("gpu_start: bad level");
    CollectorOptions options;
    options.level = static_cast<GpuLevel>(level);
    options.left_out = std::move(left_out);
    std::string error;
    {
      py::gil_scoped_release release;
      error = ActivityCollector::instance().start(options);
    }
    const ActivityCollector& collector = ActivityCollector::instance();
    return py::make_tuple(error, collector.skipped_kinds(), collector.notes());
  }, py::arg("level"), py::arg("left_out") = std::vector<std::string>{},
  "Start GPU collection; `left_out`: kinds of the level not to enable (\"kernel\", \"memcpy\",\n"
  "\"memset\", \"runtime API\", \"driver API\"). Returns (reason it could not start or '', kinds\n"
  "skipped as refused, what else differs from usual).");
  m.def("gpu_synchronize", [] {
    py::gil_scoped_release release;
    return ActivityCollector::instance().synchronize();
  }, "Wait for the GPU work launched on this thread's CUDA context; False when there is none to wait for.");
  m.def("gpu_stop", [] {
    StopReport report;
    {
      py::gil_scoped_release release;
      report = ActivityCollector::instance().stop();
    }
    return py::make_tuple(report.flush_error, report.incomplete_buffers, report.buffers_taken);
  }, "Stop GPU collection and flush CUPTI's buffers; returns (why the flush failed or '', buffers\n"
  "handed over with an incomplete record, buffers another CUPTI client was given).");
  m.def("gpu_pause", [](bool paused) {
    py::gil_scoped_release release;
    return ActivityCollector::instance().set_paused(paused);
  }, py::arg("paused"),
  "Pause (True) or resume (False) recording GPU work launched from now on; returns why CUPTI\n"
  "refused, or ''. No effect while not collecting.");
  m.def("gpu_discard", [] {
    py::gil_scoped_release release;
    ActivityCollector::instance().discard();
    ActivityCollector::instance().take_stream_annotations();
  }, "Drop GPU activity collected so far (warm-up).");
  m.def("gpu_metrics_configure", [](const std::string& group, bool l2_cache) {
    const std::optional<GpuMetricGroup> parsed = gpu_metric_group_from_name(group);
    if (!parsed) throw std::invalid_argument(fmt::format("gpu_metrics_configure: no metric group {}", group));
    KernelMetricsOptions options;
    options.group = *parsed;
    options.l2_cache = l2_cache;
    KernelMetricsCollector::instance().configure(options);
  }, py::arg("group"), py::arg("l2_cache"),
  "What the next windows measure per kernel (a GpuMetrics value, and the L2 hit rate).");
  m.def("gpu_metrics_begin", [] {
    py::gil_scoped_release release;
    return KernelMetricsCollector::instance().begin_window();
  }, "Measure the kernels launched on this thread's CUDA context from now; returns why not, or ''.");
  m.def("gpu_metrics_end", [] {
    std::string error;
    {
      py::gil_scoped_release release;
      error = KernelMetricsCollector::instance().end_window();
    }
    return py::make_tuple(error, KernelMetricsCollector::instance().kernels_left_out());
  }, "Stop measuring and read the values; returns (why they could not be read or '', kernels left out).");
  m.def("supported_gpu_metric_groups", [](int device) {
    std::string error;
    std::vector<std::string> names;
    {
      py::gil_scoped_release release;
      for (const GpuMetricGroup group : supported_metric_groups(device, error)) {
        names.emplace_back(gpu_metric_group_name(group));
      }
    }
    return py::make_tuple(names, error);
  }, py::arg("device"), "The GpuMetrics values device `device`'s chip can measure, and why none when it cannot say.");
  m.def("gpu_collecting", [] { return ActivityCollector::instance().collecting(); });
  m.def("gpu_clock", [] {
    const ActivityCollector& c = ActivityCollector::instance();
    return py::make_tuple(c.uses_host_clock(), c.clock_offset_ns());
  }, "(CUPTI uses perfprof's clock, calibrated offset in ns otherwise).");
  m.def("telemetry_start", [](int64_t interval_ns, const std::vector<std::string>& host, bool gpu, bool pcie,
                              bool nvlink, const std::string& nvml_library) {
    if (interval_ns <= 0) throw std::invalid_argument("telemetry_start: interval_ns must be > 0");
    TelemetryOptions options;
    options.interval_ns = interval_ns;
    for (const std::string& group : host) {
      if (group == "cpu") options.host.cpu = true;
      else if (group == "mem") options.host.mem = true;
      else if (group == "disk") options.host.disk = true;
      else if (group == "network") options.host.network = true;
      else throw std::invalid_argument(fmt::format("telemetry_start: unknown host group '{}'", group));
    }
    options.gpu = gpu;
    options.pcie = pcie;
    options.nvlink = nvlink;
    options.nvml_library = nvml_library;
    py::gil_scoped_release release;
    return TelemetryCollector::instance().start(options);
  }, py::arg("interval_ns"), py::arg("host"), py::arg("gpu"), py::arg("pcie"), py::arg("nvlink"),
  py::arg("nvml_library"), "Start sampling; returns a message per source that could not be opened.");
  m.def("nvml_status", [](const std::string& explicit_path) {
    NvmlStatus status;
    {
      py::gil_scoped_release release;
      status = probe_nvml(explicit_path);
    }
    py::dict result;
    result["available"] = status.available;
    result["library"] = status.library;
    result["devices"] = status.devices;
    result["reason"] = status.reason;
    return result;
  }, py::arg("explicit_path"), "Whether libnvidia-ml loads and initialises with a GPU (opened and closed again).");
  m.def("telemetry_stop", [] {
    SamplerReport report;
    {
      py::gil_scoped_release release;
      report = TelemetryCollector::instance().stop();
    }
    py::dict result;
    result["samples"] = report.samples;
    result["readings"] = report.readings;
    result["late_samples"] = report.late_samples;
    result["cpu_ns"] = report.cpu_ns;
    result["wall_ns"] = report.wall_ns;
    result["messages"] = report.messages;
    return result;
  }, "Stop sampling; returns what the sampler did (samples, readings, late_samples, cpu_ns, wall_ns, messages).");
  m.def("name_current_thread", [](std::string name) { Recorder::instance().name_current_thread(std::move(name)); },
        py::arg("name"), "Name the calling thread in traces (registering it with the recorder).");
  m.def("name_thread", [](int64_t os_tid, const std::string& name) {
    Recorder::instance().name_thread(os_tid, name);
  }, py::arg("os_tid"), py::arg("name"));
  m.def("begin_step", [](int64_t step) -> uint64_t {
    Recorder& recorder = Recorder::instance();
    if (!recorder.enabled(kChannelSteps)) return 0;
    const uint64_t id = Recorder::next_range_id();
    if (step >= 0 && static_cast<uint64_t>(step) <= kMaxCarriedStep) {
      static const StringId prefix = global_strings().intern(kProfilerStepPrefix);
      recorder.begin_step(id, prefix, static_cast<uint64_t>(step));
    } else {
      recorder.begin_range(id, global_strings().intern(fmt::format("{}{}", kProfilerStepPrefix, step)),
                           RangeKind::Step, kNoArgs);
    }
    ActivityCollector::push_host_range(id);
    return id;
  }, py::arg("step"), "Begin the ProfilerStep#<step> range; returns its id (0 when steps are not recorded).");
  m.def("end_step", [](uint64_t id, bool by_stop) {
    if (id == 0) return;
    ActivityCollector::pop_host_range(id);
    Recorder::instance().end_recorded_step(id, by_stop);
  }, py::arg("range_id"), py::arg("by_stop"),
        "End a range returned by begin_step: at a step boundary, or (by_stop) because the profiler\n"
        "stops inside it, which makes it the run's tail rather than a step.");
  m.def("filter_mstx_domains", [](std::vector<std::string> include, std::vector<std::string> exclude) {
    Mstx::instance().filter_domains(std::move(include), std::move(exclude));
  }, py::arg("include"), py::arg("exclude"));

  m.def("install_torch_profiler_stubs", [](const std::string& libtorch_cpu_path) {
    return install_torch_profiler_stubs(libtorch_cpu_path);
  }, py::arg("libtorch_cpu_path"),
  "Route torch's ITT/NVTX operator ranges to the recorder; returns why not, or ''.");

  add_torch_results(m);
  if (!add_fast_calls(m.ptr()) || !add_user_scope_enter(m.ptr()) || !add_python_tracer(m.ptr()) ||
      !add_gc_monitor(m.ptr()) ||
      !add_module_calls(m.ptr())) throw py::error_already_set();
}
