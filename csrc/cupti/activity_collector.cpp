#include "cupti/activity_collector.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/clock.h"
#include "cupti/activity_decoder.h"

namespace perfprof {

// Fixed-size, 8-byte aligned buffers handed to CUPTI and back; allocation happens at start()
// and, past the initial buffers, only in the request callback up to the cap (past it too for a
// CUPTI that must not be refused a buffer).
class ActivityCollector::BufferPool {
 public:
  BufferPool(size_t buffer_bytes, size_t initial, size_t max)
      : buffer_bytes_(buffer_bytes), max_buffers_(max) {
    for (size_t i = 0; i < initial; ++i) free_.push_back(allocate());
    allocated_ = initial;
    lent_.reserve(max);
  }

  size_t buffer_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return buffer_bytes_;
  }

  // Buffers of `bytes` from now on, `initial` of them made at once, when CUPTI holds none of the
  // pool's (a lent buffer keeps its size until it is back: then the size stays as it is).
  void set_buffer_bytes(size_t bytes, size_t initial) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes == buffer_bytes_ || !lent_.empty()) return;
    std::vector<std::unique_ptr<uint8_t[]>> made;
    for (size_t i = 0; i < initial; ++i) made.push_back(std::make_unique<uint8_t[]>(bytes));
    buffer_bytes_ = bytes;
    free_ = std::move(made);
    allocated_ = initial;
  }

  // Whether a request past the limit is refused (CUPTI then drops and counts records) or gets a
  // buffer anyway (a CUPTI that cannot take a refusal).
  void set_refuses_past_limit(bool refuses) {
    std::lock_guard<std::mutex> lock(mutex_);
    refuses_past_limit_ = refuses;
  }

  // Whether `buffer` is one of the pool's, lent to CUPTI: a buffer another CUPTI client lent it
  // may reach perfprof's completion callback once perfprof registers it again.
  bool lent(uint8_t* buffer) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::find(lent_.begin(), lent_.end(), buffer) != lent_.end();
  }

  // Forgets the buffers lent and not handed back (another client has them): the pool may
  // allocate as many again, and one coming back after all is not the pool's to free. Returns
  // how many.
  size_t forget_lent() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t lost = lent_.size();
    allocated_ -= lost;
    lent_.clear();
    return lost;
  }

  // A session's limit: buffers beyond it are freed now if idle, else when CUPTI hands them back.
  void set_limit(size_t max_buffers) {
    std::lock_guard<std::mutex> lock(mutex_);
    max_buffers_ = max_buffers;
    lent_.reserve(max_buffers);  // lending up to the limit allocates nothing in the request callback
    while (allocated_ > max_buffers_ && !free_.empty()) {
      free_.pop_back();
      --allocated_;
    }
  }

  uint8_t* acquire() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      lent_.reserve(lent_.size() + 1);  // past the limit only: lending cannot fail once the buffer is out
      if (free_.empty()) {
        if (allocated_ >= max_buffers_ && refuses_past_limit_) return nullptr;
        free_.push_back(allocate());
        ++allocated_;
      }
    } catch (...) {
      return nullptr;  // out of memory: the only refusal left to an older CUPTI
    }
    uint8_t* buffer = free_.back().release();
    free_.pop_back();
    lent_.push_back(buffer);
    return buffer;
  }

  // `buffer` must be lent().
  void release(uint8_t* buffer) noexcept {
    std::unique_ptr<uint8_t[]> owned(buffer);
    std::lock_guard<std::mutex> lock(mutex_);
    lent_.erase(std::find(lent_.begin(), lent_.end(), buffer));
    if (allocated_ > max_buffers_) {  // over a lowered limit: freed by `owned`
      --allocated_;
      return;
    }
    try {
      free_.push_back(std::move(owned));
    } catch (...) {
      --allocated_;  // freed by `owned`
    }
  }

 private:
  std::unique_ptr<uint8_t[]> allocate() const { return std::make_unique<uint8_t[]>(buffer_bytes_); }

  size_t buffer_bytes_;
  size_t max_buffers_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<uint8_t[]>> free_;
  std::vector<uint8_t*> lent_;  // to CUPTI, not handed back yet
  size_t allocated_ = 0;
  bool refuses_past_limit_ = true;
};

namespace {

uint64_t CUPTIAPI host_clock() { return static_cast<uint64_t>(now_ns()); }

// The external ids this thread pushed onto CUPTI's stack, in order, and in which session: a pop
// takes only ids it pushed, and ids of an earlier session are popped before anything else. The
// deepest ranges past kMaxPushed get no id of their own (their work takes an outer range's).
constexpr int kMaxPushed = 32;
struct PushedIds {
  uint64_t session = 0;
  int depth = 0;
  uint64_t ids[kMaxPushed];
};
thread_local PushedIds tls_pushed;

// Driver API calls that launch kernels: a kernel launched through the driver (Triton's, from
// torch.compile) has only this record to link it to the host.
bool launches_kernel(uint32_t driver_cbid) {
  switch (driver_cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return true;
    default: return false;
  }
}

}  // namespace

ActivityCollector& ActivityCollector::instance() {
  static ActivityCollector* collector = new ActivityCollector();  // CUPTI may call back at exit
  return *collector;
}

std::vector<CUpti_ActivityKind> ActivityCollector::kinds_for(const CollectorOptions& options) {
  std::vector<CUpti_ActivityKind> kinds;
  if (options.level == GpuLevel::None) return kinds;
  // The driver kind at every level: kernels launched with cuLaunchKernel (Triton's) have no
  // runtime record. CUPTI_ACTIVITY_KIND_GRAPH_TRACE never: enabling it selects graph-level
  // tracing for the rest of the process (cupti_activity.h), so the kernels of CUDA graphs would
  // vanish from this and every later session; kernel records carry their graph id instead.
  kinds = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
           CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
           CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
           CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  if (options.level >= GpuLevel::Level1) {
    kinds.insert(kinds.end(), {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2});
  }
  const auto left_out = [&options](CUpti_ActivityKind kind) {
    return std::find(options.left_out.begin(), options.left_out.end(), kind_name(kind)) != options.left_out.end();
  };
  kinds.erase(std::remove_if(kinds.begin(), kinds.end(), left_out), kinds.end());
  return kinds;
}

// At every start: CUPTI keeps one set of buffer callbacks, one timestamp callback and one
// thread-id type per process, and another client (torch.profiler's Kineto) sets its own, or
// finalizes CUPTI, which forgets them all. Registered once, perfprof's later sessions got no
// records (the other client's callbacks took the buffers) or records on another clock.
std::string ActivityCollector::register_with_cupti(const CuptiApi& api) {
  const CUptiResult result = api.ActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
  if (result != CUPTI_SUCCESS) {
    return fmt::format("CUPTI refused perfprof's activity buffers (cuptiActivityRegisterCallbacks: {}); "
                       "another CUPTI client may hold it",
                       CuptiLibrary::instance().describe(result));
  }
  // Thread ids of CUDA API calls are the host tracks' only if CUPTI reports the system's; CUPTI
  // refuses to with several subscribers (CUDA 13.4+) and then reports pthread ids.
  const CUptiResult thread_ids = api.SetThreadIdType ? api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
                                                     : CUPTI_ERROR_NOT_SUPPORTED;
  if (thread_ids != CUPTI_SUCCESS) {
    notes_.push_back(fmt::format("CUPTI reports its own thread ids (cuptiSetThreadIdType: {}): CUDA API calls are "
                                 "drawn on tracks of their own, not on the threads that made them",
                                 CuptiLibrary::instance().describe(thread_ids)));
  }
  align_clock(api);
  return {};
}

void ActivityCollector::align_clock(const CuptiApi& api) {
  if (api.ActivityRegisterTimestampCallback &&
      api.ActivityRegisterTimestampCallback(host_clock) == CUPTI_SUCCESS) {
    uses_host_clock_ = true;
    clock_offset_ns_ = 0;
    return;
  }
  uses_host_clock_ = false;
  // Older CUPTI: measure host - CUPTI with bracketed reads and keep the narrowest bracket.
  int64_t best_width = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < 16; ++i) {
    const int64_t before = now_ns();
    uint64_t cupti_now = 0;
    if (api.GetTimestamp(&cupti_now) != CUPTI_SUCCESS) continue;
    const int64_t after = now_ns();
    if (after - before < best_width) {
      best_width = after - before;
      clock_offset_ns_ = before + (after - before) / 2 - static_cast<int64_t>(cupti_now);
    }
  }
}

std::string ActivityCollector::start(const CollectorOptions& options) {
  CuptiLibrary& library = CuptiLibrary::instance();
  if (!library.available()) return library.status().reason;
  if (collecting()) return {};
  const CuptiApi& api = library.api();
  if (std::string problem = ActivityDecoder::layout_problem(api.ActivityGetStructSize); !problem.empty()) {
    return problem;
  }
  if (!pool_) {  // kept for the process: CUPTI may hold its buffers, and call back, at any time
    try {
      pool_ = std::make_unique<BufferPool>(options.buffer_bytes, options.initial_buffers, options.max_buffers);
    } catch (const std::exception& error) {
      return fmt::format("cannot allocate CUPTI buffers: {}", error.what());
    }
  }
  try {
    pool_->set_buffer_bytes(options.buffer_bytes, options.initial_buffers);
  } catch (const std::exception& error) {
    return fmt::format("cannot allocate CUPTI buffers: {}", error.what());
  }
  pool_->set_limit(options.max_buffers);
  uint32_t version = 0;
  pool_->set_refuses_past_limit(api.GetVersion(&version) == CUPTI_SUCCESS &&
                                version >= kFirstCuptiVersionRefusingBuffers);
  skipped_kinds_.clear();
  notes_.clear();
  if (std::string error = register_with_cupti(api); !error.empty()) return error;
  all_driver_calls_.store(options.level >= GpuLevel::Level1, std::memory_order_relaxed);
  incomplete_buffers_.store(0, std::memory_order_relaxed);
  const std::vector<CUpti_ActivityKind> wanted = kinds_for(options);
  for (CUpti_ActivityKind kind : wanted) {
    // Devices already in use are reported at once only by EnableAndDump (CUPTI 12.x+).
    const bool dump = kind == CUPTI_ACTIVITY_KIND_DEVICE && api.ActivityEnableAndDump;
    const CUptiResult result = dump ? api.ActivityEnableAndDump(kind) : api.ActivityEnable(kind);
    if (result == CUPTI_SUCCESS) {
      enabled_.push_back(kind);
    } else if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      disable_all(api);
      return "another CUPTI client is active (Nsight Systems, Nsight Compute, compute-sanitizer, "
             "or torch.profiler collecting CUDA): perfprof records CPU activity and NVTX ranges only";
    } else {
      skipped_kinds_.push_back(fmt::format("{} ({})", kind_name(kind), library.describe(result)));
    }
  }
  if (enabled_.empty() && !wanted.empty()) {
    std::string reasons;
    for (const std::string& skipped : skipped_kinds_) reasons += (reasons.empty() ? "" : ", ") + skipped;
    skipped_kinds_.clear();
    return fmt::format("no GPU activity kind could be enabled: {}", reasons);
  }
  if (options.level == GpuLevel::Level2 && api.ActivityEnableLaunchAttributes) {
    api.ActivityEnableLaunchAttributes(1);
  }
  session_.fetch_add(1, std::memory_order_relaxed);
  collecting_.store(!enabled_.empty(), std::memory_order_release);
  return {};
}

bool ActivityCollector::synchronize() const {
  const CudaDriverApi& driver = CuptiLibrary::instance().driver();
  CUcontext context = nullptr;
  if (!collecting() || !driver.CtxGetCurrent || !driver.CtxSynchronize ||
      driver.CtxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) {
    return false;
  }
  return driver.CtxSynchronize() == CUDA_SUCCESS;
}

StopReport ActivityCollector::stop() {
  StopReport report;
  if (!collecting()) return report;
  collecting_.store(false, std::memory_order_release);
  pop_through(0);  // the stopping thread's ids; other threads' at their next push or pop
  const CuptiApi& api = CuptiLibrary::instance().api();
  disable_all(api);
  const CUptiResult result = flush(api);
  report.incomplete_buffers = incomplete_buffers_.load(std::memory_order_relaxed);
  if (result != CUPTI_SUCCESS) {
    report.flush_error = CuptiLibrary::instance().describe(result);
  } else {
    // A forced flush hands every buffer to the registered completion callback: one not back
    // went to another client's.
    report.buffers_taken = pool_->forget_lent();
  }
  return report;
}

// CUPTI keeps the count of records it dropped for want of a buffer apart from any buffer, until
// asked (each query resets it). Records dropped after the last buffer completed come with no
// completion at all, so the count is read here, once every buffer has been handed over; asking
// in the completion callback instead loses the drops made after its query.
CUptiResult ActivityCollector::flush(const CuptiApi& api) {
  // No lock of ours is held here: the flush calls on_buffer_completed.
  const CUptiResult result = api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  if (api.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) count_dropped(dropped);
  return result;
}

void ActivityCollector::disable_all(const CuptiApi& api) {
  for (CUpti_ActivityKind kind : enabled_) api.ActivityDisable(kind);
  enabled_.clear();
  paused_ = false;
}

std::string ActivityCollector::set_paused(bool paused) {
  if (!collecting() || paused == paused_) return {};
  CuptiLibrary& library = CuptiLibrary::instance();
  const CuptiApi& api = library.api();
  for (CUpti_ActivityKind kind : enabled_) {
    if (!records_work(kind)) continue;
    const CUptiResult result = paused ? api.ActivityDisable(kind) : api.ActivityEnable(kind);
    if (result != CUPTI_SUCCESS) {
      return fmt::format("cannot {} {} activity: {}", paused ? "pause" : "resume", kind_name(kind),
                         library.describe(result));
    }
  }
  paused_ = paused;
  return {};
}

// Device records describe GPUs, and external correlation records link later work to host
// ranges: neither records work, and both stay on through a pause.
bool ActivityCollector::records_work(CUpti_ActivityKind kind) {
  return kind != CUPTI_ACTIVITY_KIND_DEVICE && kind != CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
}

const char* ActivityCollector::kind_name(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "kernel";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "memcpy";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "memset";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "runtime API";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "driver API";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "external correlation";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "synchronization";
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "memory";
    default: return "activity";
  }
}

GpuCollected ActivityCollector::take(bool flush_first) {
  if (flush_first && collecting()) flush(CuptiLibrary::instance().api());
  std::lock_guard<std::mutex> lock(collected_mutex_);
  GpuCollected taken = std::move(collected_);
  collected_ = GpuCollected{};
  collected_.devices = taken.devices;  // devices are reported once per enable; keep them known
  return taken;
}

void ActivityCollector::on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  ActivityCollector& self = instance();
  *max_records = 0;
  *buffer = self.pool_ ? self.pool_->acquire() : nullptr;
  *size = *buffer ? self.pool_->buffer_bytes() : 0;  // no buffer: CUPTI drops and counts
}

void ActivityCollector::on_buffer_completed(CUcontext /*context*/, uint32_t /*stream*/, uint8_t* buffer,
                                            size_t /*size*/, size_t valid_size) {
  ActivityCollector& self = instance();
  // Not one of perfprof's: another client's, completed to perfprof's callback after perfprof
  // registered it again. Its records are that client's session; the buffer is its to free.
  if (!buffer || !self.pool_ || !self.pool_->lent(buffer)) return;
  try {
    self.decode_buffer(buffer, valid_size);
  } catch (...) {
    // Out of memory while decoding: none of the buffer's records was kept (decode_buffer adds
    // them whole or not at all), so all are counted as dropped, never lost silently.
    self.count_dropped(self.records_in(buffer, valid_size));
  }
  self.pool_->release(buffer);
}

void ActivityCollector::decode_buffer(uint8_t* buffer, size_t valid_size) {
  const CuptiApi& api = CuptiLibrary::instance().api();
  ActivityDecoder decoder(api.GetCallbackName);
  GpuCollected decoded;
  CUpti_Activity* record = nullptr;
  const bool all_driver_calls = all_driver_calls_.load(std::memory_order_relaxed);
  CUptiResult next = CUPTI_SUCCESS;
  while ((next = api.ActivityGetNextRecord(buffer, valid_size, &record)) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_DRIVER && !all_driver_calls &&
        !launches_kernel(reinterpret_cast<const CUpti_ActivityAPI*>(record)->cbid)) {
      continue;  // Level0 keeps the driver calls that launch kernels only
    }
    decoder.decode(*record, decoded);
  }
  // An incomplete record (a forced flush of work still running) ends what can be read.
  if (next == CUPTI_ERROR_INVALID_KIND) incomplete_buffers_.fetch_add(1, std::memory_order_relaxed);
  if (!uses_host_clock_) {
    for (GpuActivity& row : decoded.activities) {
      row.start_ns += clock_offset_ns_;
      row.end_ns += clock_offset_ns_;
    }
    for (ApiCall& call : decoded.api_calls) {
      call.start_ns += clock_offset_ns_;
      call.end_ns += clock_offset_ns_;
    }
  }
  std::lock_guard<std::mutex> lock(collected_mutex_);
  GpuCollected& c = collected_;
  // What may allocate comes first: if it fails, no record of the buffer has been added and the
  // caller counts them all as dropped (links and devices added by then are harmless).
  c.external_ids.insert(decoded.external_ids.begin(), decoded.external_ids.end());
  for (GpuDevice& device : decoded.devices) {
    auto same = [&](const GpuDevice& known) { return known.id == device.id; };
    if (std::none_of(c.devices.begin(), c.devices.end(), same)) c.devices.push_back(std::move(device));
  }
  c.activities.reserve(c.activities.size() + decoded.activities.size());
  c.api_calls.reserve(c.api_calls.size() + decoded.api_calls.size());
  c.activities.insert(c.activities.end(), decoded.activities.begin(), decoded.activities.end());
  c.api_calls.insert(c.api_calls.end(), decoded.api_calls.begin(), decoded.api_calls.end());
}

size_t ActivityCollector::records_in(uint8_t* buffer, size_t valid_size) noexcept {
  const CuptiApi& api = CuptiLibrary::instance().api();
  size_t records = 0;
  CUpti_Activity* record = nullptr;
  while (api.ActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) ++records;
  return records;
}

void ActivityCollector::count_dropped(size_t records) noexcept {
  std::lock_guard<std::mutex> lock(collected_mutex_);
  collected_.dropped_records += records;
}

void ActivityCollector::push(uint64_t range_id) noexcept {
  pop_earlier_sessions();
  PushedIds& pushed = tls_pushed;
  if (pushed.depth == kMaxPushed) return;
  const CuptiApi& api = CuptiLibrary::instance().api();
  if (api.ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, range_id) == CUPTI_SUCCESS) {
    pushed.ids[pushed.depth++] = range_id;
  }
}

void ActivityCollector::pop_host_range(uint64_t range_id) noexcept {
  const PushedIds& pushed = tls_pushed;
  if (pushed.depth == 0) return;
  ActivityCollector& self = instance();
  self.pop_earlier_sessions();
  // Only a range that pushed its id pops, and with it the ranges begun inside it and still
  // open (an mstx range may end before the ranges begun in it): CUPTI's stack is a stack.
  if (std::find(pushed.ids, pushed.ids + pushed.depth, range_id) != pushed.ids + pushed.depth) {
    self.pop_through(range_id);
  }
}

// Pops this thread's ids down to and including `range_id`; all of them for 0 (never a range id).
void ActivityCollector::pop_through(uint64_t range_id) noexcept {
  PushedIds& pushed = tls_pushed;
  const CuptiApi& api = CuptiLibrary::instance().api();
  while (pushed.depth > 0) {
    uint64_t popped = 0;
    api.ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
    if (pushed.ids[--pushed.depth] == range_id) break;
  }
}

// Ids this thread pushed in an earlier session would give that session's range ids to this
// session's work.
void ActivityCollector::pop_earlier_sessions() noexcept {
  const uint64_t session = session_.load(std::memory_order_relaxed);
  if (tls_pushed.session == session) return;
  pop_through(0);
  tls_pushed.session = session;
}

void ActivityCollector::annotate_stream_range(uint64_t range_id, uint64_t stream_handle) noexcept {
  const CuptiApi& api = CuptiLibrary::instance().api();
  if (!collecting() || !api.GetStreamIdEx) return;
  uint32_t stream_id = 0;
  const auto stream = reinterpret_cast<CUstream>(static_cast<uintptr_t>(stream_handle));
  if (api.GetStreamIdEx(nullptr, stream, 0, &stream_id) != CUPTI_SUCCESS) return;
  try {
    std::lock_guard<std::mutex> lock(collected_mutex_);
    stream_annotations_.push_back({range_id, stream_id});
  } catch (...) {
    // out of memory: the range keeps its host side only
  }
}

std::vector<StreamAnnotation> ActivityCollector::take_stream_annotations() {
  std::lock_guard<std::mutex> lock(collected_mutex_);
  std::vector<StreamAnnotation> taken;
  taken.swap(stream_annotations_);
  return taken;
}

}  // namespace perfprof
