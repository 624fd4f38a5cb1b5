#include "analysis/step_trace_time.h"

#include <algorithm>

#include "analysis/device_work.h"
#include "analysis/host_collectives.h"
#include "analysis/op_tree.h"
#include "analysis/profiler_steps.h"
#include "analysis/time_intervals.h"

namespace perfprof {
namespace {

// The device's time by what it was doing, as sets of time over the whole trace.
struct DeviceTime {
  TimeSet compute, communication, overlapped, any;
};

// The work's intervals by type; `any` also holds work of neither type (copies).
struct DeviceWork {
  std::vector<TimeInterval> compute, communication, any;
};

DeviceTime device_time(DeviceWork work) {
  DeviceTime time;
  time.compute = union_of(std::move(work.compute));
  time.communication = union_of(std::move(work.communication));
  time.overlapped = intersection_of(time.compute, time.communication);
  time.any = union_of(std::move(work.any));
  return time;
}

DeviceWork gpu_work(const TraceModel& model) {
  DeviceWork work;
  for (const GpuActivity& a : model.gpu.activities) {
    if (!is_device_work(a.kind)) continue;
    const TimeInterval interval{a.start_ns, a.end_ns};
    work.any.push_back(interval);
    switch (device_work_type(model, a)) {
      case DeviceWorkType::Compute: work.compute.push_back(interval); break;
      case DeviceWorkType::Communication: work.communication.push_back(interval); break;
      case DeviceWorkType::Memory: break;
    }
  }
  return work;
}

// The host as the device: operators compute, torch.distributed's ranges communicate.
DeviceWork host_work(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  DeviceWork work;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::CpuOp && r.kind[i] != RangeKind::UserAnnotation) continue;
    const TimeInterval interval{r.begin_ns[i], r.end_ns[i]};
    if (is_host_collective(model.str(r.name[i]))) {
      work.communication.push_back(interval);
    } else if (r.kind[i] == RangeKind::CpuOp) {
      work.compute.push_back(interval);
    } else {
      continue;  // a user annotation is not work of its own
    }
    work.any.push_back(interval);
  }
  return work;
}

// The host's time in operators, and in GC pauses while no operator ran, over every thread.
struct HostTime {
  TimeSet operators, gc, gc_in_operators;
};

HostTime host_time(const TraceModel& model) {
  const RangeTable& r = model.ranges;
  std::vector<TimeInterval> operators, gc;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::CpuOp) operators.push_back({r.begin_ns[i], r.end_ns[i]});
    if (r.kind[i] == RangeKind::Gc) gc.push_back({r.begin_ns[i], r.end_ns[i]});
  }
  HostTime time;
  time.operators = union_of(std::move(operators));
  time.gc = union_of(std::move(gc));
  time.gc_in_operators = intersection_of(time.gc, time.operators);
  return time;
}

}  // namespace

StepTimeSource step_time_source(const TraceModel& model) {
  const auto& activities = model.gpu.activities;
  const bool device_work =
      std::any_of(activities.begin(), activities.end(), [](const GpuActivity& a) { return is_device_work(a.kind); });
  return device_work ? StepTimeSource::Device : StepTimeSource::Host;
}

std::string_view step_time_source_name(StepTimeSource source) {
  return source == StepTimeSource::Device ? "device" : "host";
}

std::vector<StepTraceTime> step_trace_time(const TraceModel& model) {
  const DeviceTime device =
      device_time(step_time_source(model) == StepTimeSource::Device ? gpu_work(model) : host_work(model));
  std::vector<StepTraceTime> rows;
  for (const ProfilerStep& step : profiler_steps(model)) {
    const int64_t begin = step.begin_ns, end = step.end_ns;
    StepTraceTime row;
    row.step = step.number;
    row.begin_ns = begin;
    row.end_ns = end;
    row.computing_ns = covered_ns(device.compute, begin, end);
    row.communication_ns = covered_ns(device.communication, begin, end);
    row.overlapped_ns = covered_ns(device.overlapped, begin, end);
    row.communication_not_overlapped_ns = row.communication_ns - row.overlapped_ns;
    row.free_ns = (end - begin) - covered_ns(device.any, begin, end);
    row.preparing_ns = first_in(device.any, begin, end).value_or(end) - begin;
    row.bubble_ns = 0;
    row.stage_ns = (end - begin) - row.bubble_ns;
    row.communication_not_overlapped_exclude_receive_ns = row.communication_not_overlapped_ns;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<StepHostTime> step_host_time(const TraceModel& model) {
  const HostTime host = host_time(model);
  std::vector<StepHostTime> rows;
  for (const ProfilerStep& step : profiler_steps(model)) {
    StepHostTime row;
    row.host_operators_ns = covered_ns(host.operators, step.begin_ns, step.end_ns);
    row.host_gc_ns = covered_ns(host.gc, step.begin_ns, step.end_ns) -
                     covered_ns(host.gc_in_operators, step.begin_ns, step.end_ns);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace perfprof
