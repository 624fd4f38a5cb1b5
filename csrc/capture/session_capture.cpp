#include "capture/session_capture.h"

#include <utility>

#include "capture/live_capture.h"
#include "cupti/activity_collector.h"
#include "cupti/kernel_metrics_collector.h"
#include "record/recorder.h"

namespace perfprof {
namespace {

GpuInput take_gpu_records() {
  ActivityCollector& collector = ActivityCollector::instance();
  GpuInput gpu;
  gpu.collected = collector.take(true);
  gpu.stream_annotations = collector.take_stream_annotations();
  gpu.kernel_metrics = KernelMetricsCollector::instance().take(gpu.collected);
  gpu.collected_any = true;
  return gpu;
}

}  // namespace

Capture capture_session(CaptureStream* stream, bool with_gpu, const CollectionWindow& window) {
  GpuInput gpu = with_gpu ? take_gpu_records() : GpuInput{};
  CollectedEvents host = Recorder::instance().collect();
  return stream != nullptr ? complete_capture(*stream, std::move(host), std::move(gpu), window)
                           : capture_of_this_process(std::move(host), std::move(gpu), window);
}

}  // namespace perfprof
