#include "analysis/step_trace_time.h"

#include "analysis/device_work.h"
#include "analysis/op_tree.h"
#include "analysis/profiler_steps.h"
#include "analysis/time_intervals.h"

namespace perfprof {
namespace {

// The device's time by what it was doing, as sets of time over the whole trace.
struct DeviceTime {
  TimeSet compute, communication, overlapped, any;
};

DeviceTime device_time(const TraceModel& model) {
  std::vector<TimeInterval> compute, communication, any;
  for (const GpuActivity& a : model.gpu.activities) {
    if (!is_device_work(a.kind)) continue;
    const TimeInterval interval{a.start_ns, a.end_ns};
    any.push_back(interval);
    switch (device_work_type(model, a)) {
      case DeviceWorkType::Compute: compute.push_back(interval); break;
      case DeviceWorkType::Communication: communication.push_back(interval); break;
      case DeviceWorkType::Memory: break;
    }
  }
  DeviceTime time;
  time.compute = union_of(std::move(compute));
  time.communication = union_of(std::move(communication));
  time.overlapped = intersection_of(time.compute, time.communication);
  time.any = union_of(std::move(any));
  return time;
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

std::vector<StepTraceTime> step_trace_time(const TraceModel& model) {
  const DeviceTime device = device_time(model);
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
