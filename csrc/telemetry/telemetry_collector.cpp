#include "telemetry/telemetry_collector.h"

#include <unistd.h>

#include <exception>
#include <utility>

#include <fmt/format.h>

#include "telemetry/gpu_source.h"

namespace perfprof {
namespace {

bool any(const HostGroups& groups) { return groups.cpu || groups.mem || groups.disk || groups.network; }

std::vector<std::unique_ptr<TelemetrySource>> open_sources(const TelemetryOptions& options,
                                                           std::vector<std::string>& messages) {
  std::vector<std::unique_ptr<TelemetrySource>> sources;
  if (any(options.host)) sources.push_back(std::make_unique<HostSource>(options.host));
  if (options.gpu || options.pcie || options.nvlink) {
    GpuSourceOptions gpu_options;
    gpu_options.pcie = options.pcie;
    gpu_options.nvlink = options.nvlink;
    std::string error;
    if (auto gpu = open_gpu_source(gpu_options, options.nvml_library, error)) {
      sources.push_back(std::move(gpu));
    } else {
      messages.push_back(fmt::format("GPU telemetry is not sampled: {}", error));
    }
  }
  return sources;
}

}  // namespace

TelemetryCollector& TelemetryCollector::instance() {
  static TelemetryCollector collector;
  return collector;
}

std::vector<std::string> TelemetryCollector::start(const TelemetryOptions& options) noexcept {
  std::vector<std::string> messages;
  stop();
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    std::vector<std::unique_ptr<TelemetrySource>> sources = open_sources(options, messages);
    if (sources.empty()) return messages;
    auto sampler = std::make_unique<Sampler>(std::move(sources), options.interval_ns);
    std::string error = sampler->start();
    if (!error.empty()) {
      messages.push_back(std::move(error));
      return messages;
    }
    sampler_ = std::move(sampler);
    owner_ = getpid();
  } catch (const std::exception& error) {
    messages.push_back(fmt::format("telemetry is not sampled: {}", error.what()));
  }
  return messages;
}

TelemetryCollector::~TelemetryCollector() { stop(); }

SamplerReport TelemetryCollector::stop() noexcept {
  std::unique_ptr<Sampler> sampler;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sampler = std::move(sampler_);
  }
  if (sampler && getpid() != owner_) {
    // A fork()ed child has a copy of the sampler but not its thread: joining it would wait
    // forever, and so would destroying its condition variable, which the copy shows waited on
    // (a child leaving by exit() runs this destructor). The copy is left behind, deliberately.
    static_cast<void>(sampler.release());
    return {};
  }
  return sampler ? sampler->stop() : SamplerReport{};
}

bool TelemetryCollector::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sampler_ != nullptr;
}

}  // namespace perfprof
