// perfprof._core: the C++ core as seen from Python. Hot per-event calls live in fast_calls.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "bindings/fast_calls.h"
#include "common/clock.h"
#include "export/chrome_trace.h"
#include "mstx/mstx.h"
#include "record/recorder.h"
#include "schedule/schedule.h"
#include "schedule/step_controller.h"
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

// A collected trace, shared by the profiler and any exporter running in the background.
class Trace {
 public:
  explicit Trace(TraceModel model) : model_(std::make_shared<const TraceModel>(std::move(model))) {}

  const TraceModel& model() const { return *model_; }

 private:
  std::shared_ptr<const TraceModel> model_;
};

void export_trace(const Trace& trace, const std::string& path, const ChromeTraceOptions& options) {
  std::string failure;
  {
    py::gil_scoped_release release;
    try {
      write_chrome_trace(trace.model(), path, options);
    } catch (const std::exception& error) {
      failure = error.what();
    }
  }
  if (!failure.empty()) {
    PyErr_SetString(PyExc_OSError, failure.c_str());
    throw py::error_already_set();
  }
}

py::dict stats_of(const TraceModel& m) {
  py::dict stats;
  stats["dropped_events"] = m.stats.dropped_events;
  stats["unmatched_range_ends"] = m.stats.unmatched_range_ends;
  stats["unfinished_ranges"] = m.stats.unfinished_ranges;
  stats["async_ranges"] = m.stats.async_ranges;
  stats["events_before_window"] = m.stats.events_before_window;
  return stats;
}

py::list ranges_of(const TraceModel& m) {
  const RangeTable& r = m.ranges;
  py::list out;
  for (size_t i = 0; i < r.size(); ++i) {
    out.append(py::make_tuple(m.str(r.name[i]), m.str(r.category[i]),
                              m.threads[r.track[i]].os_tid, r.begin_ns[i], r.end_ns[i],
                              m.threads[r.end_track[i]].os_tid, static_cast<int>(r.flags[i])));
  }
  return out;
}

Trace collect_trace(int64_t window_begin_ns, int64_t window_end_ns) {
  py::gil_scoped_release release;
  return Trace(build_trace(Recorder::instance().collect(), {window_begin_ns, window_end_ns}));
}

}  // namespace
}  // namespace perfprof::bindings

PYBIND11_MODULE(_core, m) {
  using namespace perfprof;
  using namespace perfprof::bindings;
  m.doc() = "perfprof C++ core: recorder, schedule, trace model and exporters.";

  m.attr("CHANNEL_STEPS") = static_cast<uint32_t>(kChannelSteps);
  m.attr("CHANNEL_USER_ANNOTATIONS") = static_cast<uint32_t>(kChannelUserAnnotations);
  m.attr("CHANNEL_MSTX") = static_cast<uint32_t>(kChannelMstx);
  m.attr("CHANNEL_COUNTERS") = static_cast<uint32_t>(kChannelCounters);
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
      .def("action_at", [](const Schedule& s, int64_t step) { return static_cast<int>(s.action_at(step)); })
      .def("describe", &Schedule::describe);

  py::class_<StepController>(m, "StepController")
      .def(py::init<>())
      .def("start", [](StepController& c, int first) { return to_list(c.start(to_action(first))); })
      .def("advance", [](StepController& c, int next) { return to_list(c.advance(to_action(next))); })
      .def("stop", [](StepController& c) { return to_list(c.stop()); })
      .def_property_readonly("step", &StepController::step)
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
      .def("ranges", [](const Trace& t) { return ranges_of(t.model()); },
           "List of (name, category, tid, begin_ns, end_ns, end_tid, flags) tuples.")
      .def("export_chrome_trace",
           [](const Trace& t, const std::string& path,
              std::vector<std::pair<std::string, std::string>> metadata,
              std::string device_properties_json, int rank, int world_size, std::string backend) {
             ChromeTraceOptions options;
             options.metadata = std::move(metadata);
             options.device_properties_json = std::move(device_properties_json);
             options.rank = rank;
             options.world_size = world_size;
             options.distributed_backend = std::move(backend);
             export_trace(t, path, options);
           },
           py::arg("path"), py::arg("metadata"), py::arg("device_properties_json") = "[]",
           py::arg("rank") = 0, py::arg("world_size") = 1, py::arg("backend") = "");

  m.def("now_ns", &now_ns, "The recorder's clock (CLOCK_MONOTONIC) in nanoseconds.");
  m.def("set_channels", [](uint32_t mask) { Recorder::instance().set_channels(mask); });
  m.def("channels", [] { return Recorder::instance().channels(); });
  m.def("discard", [] {
    py::gil_scoped_release release;
    Recorder::instance().discard();
  }, "Drop everything recorded so far.");
  m.def("collect", &collect_trace, py::arg("window_begin_ns"), py::arg("window_end_ns"),
        "Move everything recorded so far into a Trace.");
  m.def("name_thread", [](int64_t os_tid, const std::string& name) {
    Recorder::instance().name_thread(os_tid, name);
  });
  m.def("begin_step", [](int64_t step) -> uint64_t {
    Recorder& recorder = Recorder::instance();
    if (!recorder.enabled(kChannelSteps)) return 0;
    static const StringId category = global_strings().intern("user_annotation");
    const uint64_t id = Recorder::next_range_id();
    recorder.begin_range(id, global_strings().intern(fmt::format("ProfilerStep#{}", step)), category,
                         kEmptyString);
    return id;
  }, "Begin the ProfilerStep#<step> range; returns its id (0 when steps are not recorded).");
  m.def("filter_mstx_domains", [](std::vector<std::string> include, std::vector<std::string> exclude) {
    Mstx::instance().filter_domains(std::move(include), std::move(exclude));
  });

  if (!add_fast_calls(m.ptr())) throw py::error_already_set();
}
