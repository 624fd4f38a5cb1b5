#include "telemetry/sampler.h"

#include <ctime>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "common/clock.h"
#include "record/recorder.h"

namespace perfprof {
namespace {

int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

Sampler::Sampler(std::vector<std::unique_ptr<TelemetrySource>> sources, int64_t interval_ns)
    : sources_(std::move(sources)), source_reported_(sources_.size(), false), interval_ns_(interval_ns) {}

Sampler::~Sampler() { stop(); }

std::string Sampler::start() noexcept {
  try {
    thread_ = std::thread([this] { run(); });
    return "";
  } catch (const std::exception& error) {
    return fmt::format("cannot start the sampler thread: {}", error.what());
  }
}

SamplerReport Sampler::stop() noexcept {
  if (!thread_.joinable()) return std::move(report_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  return std::move(report_);
}

void Sampler::run() noexcept {
  Recorder::instance().name_current_thread("perfprof sampler");
  std::vector<Reading> readings;
  const int64_t begin = now_ns();
  int64_t slot = begin;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    const bool last = stopping_;
    lock.unlock();
    sample_all(now_ns(), readings);
    lock.lock();
    if (last) break;
    // Slots stay on the grid begin + k·interval, so the period does not drift with the cost of a
    // round; a round that overran its slot skips the slots it missed rather than bunching up.
    slot += interval_ns_;
    const int64_t now = now_ns();
    if (slot <= now) {
      const int64_t missed = (now - slot) / interval_ns_ + 1;
      report_.late_samples += static_cast<uint64_t>(missed);
      slot += missed * interval_ns_;
    }
    wake_.wait_for(lock, std::chrono::nanoseconds(slot - now), [this] { return stopping_; });
  }
  report_.wall_ns = now_ns() - begin;
  report_.cpu_ns = thread_cpu_ns();
}

void Sampler::sample_all(int64_t now, std::vector<Reading>& readings) noexcept {
  Recorder& recorder = Recorder::instance();
  for (size_t i = 0; i < sources_.size(); ++i) {
    readings.clear();
    std::string failure = sources_[i]->sample(now, readings);
    for (const Reading& reading : readings) recorder.counter_sample(now, reading.metric, reading.instance, reading.value);
    report_.readings += readings.size();
    if (!failure.empty() && !source_reported_[i]) {
      source_reported_[i] = true;
      try {
        report_.messages.push_back(fmt::format("{}: {}", sources_[i]->name(), failure));
      } catch (const std::exception&) {
        // Out of memory for a message: the samples above were still recorded.
      }
    }
  }
  ++report_.samples;
}

}  // namespace perfprof
