#pragma once
// GPU activity collection through the CUPTI activity API.
//
// Buffers come from a pool allocated when collection starts (a buffer request inside a kernel
// launch must not allocate); CUPTI fills them, and completed buffers are decoded on CUPTI's own
// thread, off the application's path. Nothing here throws into CUPTI's callbacks.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cupti/cupti_library.h"
#include "record/gpu_records.h"

namespace perfprof {

// The spec's levels (ExperimentalConfig.profiler_level), from least to most collected.
enum class GpuLevel : int { None = 0, Level0 = 1, Level1 = 2, Level2 = 3 };

struct CollectorOptions {
  GpuLevel level = GpuLevel::Level0;
  size_t buffer_bytes = 4 << 20;   // per CUPTI buffer (a change takes effect at a start when
                                   // CUPTI holds none of perfprof's buffers)
  size_t initial_buffers = 8;      // allocated at the first start
  size_t max_buffers = 256;        // past this, records are dropped and counted (1 GiB), from
                                   // CUPTI API version 27 (CUDA 12.9) on: older CUPTI must not be
                                   // refused a buffer, so it gets one past the limit
  // Kinds of the level not to enable, by kind_name() ("kernel", "memcpy", ...): torch.profiler's
  // per-activity filter selects among them.
  std::vector<std::string> left_out;
};

// What stop() found GPU collection lost, besides the records CUPTI dropped (counted with those
// delivered).
struct StopReport {
  // Why CUPTI could not flush (its error), or "" when it did: the records of buffers not
  // completed then are missing, and nobody can count them.
  std::string flush_error;
  // Buffers handed over since start() that held an incomplete record (GPU work unfinished at a
  // forced flush): CUPTI's reader stops there, so that record and those after it are missing.
  size_t incomplete_buffers = 0;
  // Buffers perfprof lent CUPTI that the flush did not hand back: another CUPTI client
  // registered its own callbacks during the session and was given them with their records.
  size_t buffers_taken = 0;
};

// CUPTI API version from which a buffer request may be refused (*buffer = NULL): older
// versions can crash on it (libkineto guards the same).
inline constexpr uint32_t kFirstCuptiVersionRefusingBuffers = 27;

class ActivityCollector {
 public:
  static ActivityCollector& instance();

  // Registers perfprof's buffer and timestamp callbacks with CUPTI (again: another CUPTI client,
  // torch.profiler's Kineto say, may have replaced them or finalized CUPTI since the last
  // session) and enables the activity kinds of the level. Returns an empty string on success,
  // else why collection could not start (CUPTI refused the callbacks, another client holds it,
  // or no kind could be enabled); nothing is then enabled. A kind this CUPTI or device refuses
  // alone is skipped and named in skipped_kinds(); what else works differently from usual
  // (thread ids CUPTI could not be told to report) is said in notes().
  std::string start(const CollectorOptions& options);
  const std::vector<std::string>& skipped_kinds() const { return skipped_kinds_; }
  const std::vector<std::string>& notes() const { return notes_; }

  // Waits for the GPU work launched so far on the calling thread's CUDA context, so that every
  // record of it is complete when stop() flushes: cuptiActivityFlushAll synchronizes nothing,
  // and a forced flush hands over records still incomplete. False when no context is current
  // (nothing launched from this thread) or the driver lacks the calls.
  bool synchronize() const;
  // Disables collection and flushes every buffer CUPTI holds, with its count of dropped records,
  // and says what was lost otherwise.
  StopReport stop();
  bool collecting() const { return collecting_.load(std::memory_order_acquire); }

  // Pauses (true) or resumes (false) recording GPU work: the kinds that record work and API
  // calls are disabled, so what is launched while paused is not recorded, while the records of
  // earlier work still arrive (torch.profiler's toggle_collection_dynamic). Returns why CUPTI
  // refused, or "". No effect while not collecting; stop() and start() end a pause.
  std::string set_paused(bool paused);

  // Moves out what was decoded so far (flushing first when `flush_first`), or drops it. Every
  // record CUPTI produced before a flush is in what that take or a later one returns: delivered,
  // or counted in dropped_records.
  GpuCollected take(bool flush_first);
  void discard() { take(true); }

  // Host ranges being entered/left on this thread while collecting: GPU work launched inside
  // gets the innermost range's id as its external correlation ("External id"). A range's end
  // pops its own id only: ranges begun while not collecting, and mstx ranges that end out of
  // order, pop nothing of another's; ids a thread pushed in an earlier session are popped at
  // its first push or pop in a later one.
  static void push_host_range(uint64_t range_id) noexcept {
    if (instance().collecting_.load(std::memory_order_relaxed)) instance().push(range_id);
  }
  static void pop_host_range(uint64_t range_id) noexcept;

  // An mstx range given a CUDA stream while collecting: its GPU span is drawn on that stream.
  void annotate_stream_range(uint64_t range_id, uint64_t stream_handle) noexcept;
  std::vector<StreamAnnotation> take_stream_annotations();

  // Timestamps CUPTI reports are on the host clock (now_ns) when CUPTI takes perfprof's clock
  // through cuptiActivityRegisterTimestampCallback; else they are shifted by this calibrated
  // offset. Documented error: half the narrowest bracket of 16 paired reads.
  int64_t clock_offset_ns() const { return clock_offset_ns_; }
  bool uses_host_clock() const { return uses_host_clock_; }

 private:
  ActivityCollector() = default;
  class BufferPool;

  static void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer,
                                           size_t size, size_t valid_size);
  // Adds the buffer's records to what was collected, all of them or (out of memory) none.
  void decode_buffer(uint8_t* buffer, size_t valid_size);
  static size_t records_in(uint8_t* buffer, size_t valid_size) noexcept;
  void count_dropped(size_t records) noexcept;
  CUptiResult flush(const CuptiApi& api);
  std::string register_with_cupti(const CuptiApi& api);
  void align_clock(const CuptiApi& api);
  static std::vector<CUpti_ActivityKind> kinds_for(const CollectorOptions& options);
  void disable_all(const CuptiApi& api);
  static bool records_work(CUpti_ActivityKind kind);
  static const char* kind_name(CUpti_ActivityKind kind);
  void push(uint64_t range_id) noexcept;
  void pop_through(uint64_t range_id) noexcept;
  void pop_earlier_sessions() noexcept;

  std::atomic<bool> collecting_{false};
  std::atomic<uint64_t> session_{0};  // counts starts: external ids pushed before are stale
  std::atomic<size_t> incomplete_buffers_{0};
  bool uses_host_clock_ = false;
  int64_t clock_offset_ns_ = 0;
  std::vector<CUpti_ActivityKind> enabled_;
  std::atomic<bool> all_driver_calls_{false};  // Level1+: every driver API call, else kernel launches
  bool paused_ = false;  // the kinds of enabled_ that record work are disabled
  std::vector<std::string> skipped_kinds_;
  std::vector<std::string> notes_;
  std::unique_ptr<BufferPool> pool_;

  std::mutex collected_mutex_;  // never held while calling into CUPTI
  GpuCollected collected_;
  std::vector<StreamAnnotation> stream_annotations_;  // guarded by collected_mutex_
};

}  // namespace perfprof
