// libperfprof_fake_cupti: a test double of libcupti's activity API for machines without a GPU.
//
// It implements, from the public CUPTI headers, the CUPTI entry points perfprof calls, and
// delivers synthetic activity records through the client's real buffer callbacks the way CUPTI
// does: records are packed into the current client buffer (each on an 8-byte boundary); when a
// record does not fit, that buffer is completed and a new one requested; completed buffers are
// handed to the completion callback on one background worker thread, and cuptiActivityFlushAll
// hands over the partly filled one on the calling thread. The simulated CUDA calls come from the
// control API in fake_cupti_control.h. Per-kernel metrics (the Profiler Host and Range Profiler
// APIs) have their own section at the end.
//
// Concurrency: all state sits behind one mutex, and no client callback (buffer request, buffer
// completion, timestamp) is ever called with it held, so clients may call back into the double.
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_target.h>
#include <cupti_version.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fake_cupti_control.h"
#include "fake_cupti_records.h"

namespace fake_cupti {
namespace {

constexpr uint64_t kApiDurationNs = 2'000;    // host time of a simulated asynchronous API call
constexpr uint64_t kLaunchLatencyNs = 1'000;  // from the end of that call to its device work
constexpr uint32_t kFirstVersionWithStructSizes = 130000;  // see cuptiActivityGetStructSize
// Before this API version (CUDA 12.9) CUPTI can crash when a buffer request is declined
// (libkineto guards it); the double aborts then, so that a test sees it.
constexpr uint32_t kFirstVersionTakingNullBuffers = 27;

using KindSet = std::bitset<CUPTI_ACTIVITY_KIND_COUNT>;

// --- Small helpers ---------------------------------------------------------------------------

// CUPTI's default normalised clock on Linux.
uint64_t realtime_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

uint64_t read_clock(CUpti_TimestampCallbackFunc timestamp_callback) {
  return timestamp_callback ? timestamp_callback() : realtime_ns();
}

uint32_t current_thread_id(CUpti_ActivityThreadIdType type) {
  if (type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return static_cast<uint32_t>(syscall(SYS_gettid));
  }
  return static_cast<uint32_t>(pthread_self());
}

bool is_activity_kind(CUpti_ActivityKind kind) {
  return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < CUPTI_ACTIVITY_KIND_COUNT;
}

bool is_external_kind(int kind) {
  return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
         kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

// The first record of a buffer starts at its first 8-byte boundary.
uint8_t* first_record_address(uint8_t* buffer) {
  const auto misalignment = reinterpret_cast<uintptr_t>(buffer) % ACTIVITY_RECORD_ALIGNMENT;
  return misalignment == 0 ? buffer : buffer + (ACTIVITY_RECORD_ALIGNMENT - misalignment);
}

// The kind kernel records get: CONCURRENT_KERNEL if enabled, else KERNEL if enabled.
CUpti_ActivityKind kernel_kind(const KindSet& enabled) {
  for (const CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL}) {
    if (enabled.test(kind)) return kind;
  }
  return CUPTI_ACTIVITY_KIND_INVALID;  // matches no enabled kind
}

// The per-kernel metrics section (end of file) sees every simulated launch, and resets with the
// rest of the double.
void measure_kernel_launch(uint32_t context, const char* kernel_name);
void reset_kernel_metrics();

class ScopedFlag {
 public:
  explicit ScopedFlag(bool& flag) : flag_(flag) { flag_ = true; }
  ~ScopedFlag() { flag_ = false; }
  ScopedFlag(const ScopedFlag&) = delete;
  ScopedFlag& operator=(const ScopedFlag&) = delete;

 private:
  bool& flag_;
};

// --- Client buffers --------------------------------------------------------------------------

// A buffer the client lent the double, with the records packed into it so far.
class Buffer {
 public:
  Buffer(uint8_t* data, size_t size, size_t max_records)
      : data_(data),
        size_(size),
        max_records_(max_records),
        used_(static_cast<size_t>(first_record_address(data) - data)) {}

  bool has_room_for(size_t record_size) const { return !is_full() && used_ + record_size <= size_; }
  // Holds the most records the client asked for (maxNumRecords, 0 meaning no limit).
  bool is_full() const { return max_records_ != 0 && records_ >= max_records_; }

  // Record sizes are multiples of 8 (see pack), so every record starts on an 8-byte boundary.
  // The first `bytes` of `record` (the struct of an older CUPTI is a prefix of the current).
  uint8_t* append(const Record& record, size_t bytes) {
    uint8_t* const at = data_ + used_;
    std::memcpy(at, record.data(), bytes);
    used_ += bytes;
    ++records_;
    return at;
  }

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t valid_size() const { return records_ == 0 ? 0 : used_; }
  size_t records() const { return records_; }

 private:
  uint8_t* data_;
  size_t size_;
  size_t max_records_;
  size_t used_;
  size_t records_ = 0;
};

// --- Per-thread state ------------------------------------------------------------------------

// The calling thread's external-correlation id stacks, one per kind. Only touched with the
// double's mutex held; stacks from before the last reset (an older generation) count as empty.
struct ExternalIdStacks {
  uint64_t generation = 0;
  std::vector<uint64_t> by_kind[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
};
thread_local ExternalIdStacks t_external_ids;

// True while this thread runs a buffer completion callback: waiting there for deliveries to
// finish would wait for itself.
thread_local bool t_in_completion_callback = false;

// What one simulated API call needs from the double's state, taken in one go.
struct CallSetup {
  uint32_t correlation_id = 0;
  uint32_t thread_id = 0;
  KindSet enabled;
  CUpti_TimestampCallbackFunc timestamp_callback = nullptr;
  // (kind, top of stack) for every non-empty external-id stack of the calling thread.
  std::vector<std::pair<CUpti_ExternalCorrelationKind, uint64_t>> external_ids;
};

struct Counters {
  size_t buffers_requested = 0;
  size_t buffers_completed = 0;
  size_t records_delivered = 0;
};

// --- The double ------------------------------------------------------------------------------

class FakeCupti {
 public:
  FakeCupti() = default;
  ~FakeCupti() { stop_worker(); }
  FakeCupti(const FakeCupti&) = delete;
  FakeCupti& operator=(const FakeCupti&) = delete;

  // Configuration.
  std::optional<CUptiResult> injected_failure(const char* function);
  void inject_failure(const char* function, CUptiResult result);
  uint32_t version();
  void set_version(uint32_t version);
  void register_buffer_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                 CUpti_BuffersCallbackCompleteFunc complete);
  CUptiResult enable(CUpti_ActivityKind kind);
  CUptiResult disable(CUpti_ActivityKind kind);
  void set_launch_attributes(bool enabled);
  void set_timestamp_callback(CUpti_TimestampCallbackFunc callback);
  uint64_t now();
  void set_thread_id_type(CUpti_ActivityThreadIdType type);
  CUpti_ActivityThreadIdType thread_id_type();
  void push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id);
  std::optional<uint64_t> pop_external_id(CUpti_ExternalCorrelationKind kind);
  int external_stack_depth(CUpti_ExternalCorrelationKind kind);
  void add_device(DeviceDescription device);
  const char* intern(const char* text);  // a copy kept for the process lifetime

  // Records.
  CallSetup begin_call();
  void store(const Record& record);
  void drop_next(uint32_t count);
  void set_completion_hooks(void (*before)(), void (*after)());
  size_t take_dropped(CUcontext context);
  void set_in_flight_next(uint32_t count);
  void complete_in_flight();  // the GPU finished: in-flight records get their kind
  // Where and when work of `duration_ns` queued on a stream at `ready_ns` runs (the stream's
  // own clock: after its earlier work), or at `start_ns` exactly.
  uint64_t queue_on_stream(uint32_t device, uint32_t stream, uint64_t ready_ns,
                           std::optional<uint64_t> start_ns, uint64_t duration_ns);
  bool graph_level_tracing();

  // Delivery and lifetime.
  CUptiResult flush_all();
  void finalize();
  // keep_callbacks: the client's buffer and timestamp callbacks (and thread id type) stay.
  void reset(bool keep_callbacks);
  Counters counters();

 private:
  using Lock = std::unique_lock<std::mutex>;

  // Everything fake_cupti_reset forgets.
  struct Settings {
    KindSet enabled;
    std::map<std::string, CUptiResult, std::less<>> failures;  // found without allocating
    uint32_t version = CUPTI_API_VERSION;
    CUpti_BuffersCallbackRequestFunc request = nullptr;
    CUpti_BuffersCallbackCompleteFunc complete = nullptr;
    CUpti_TimestampCallbackFunc timestamp = nullptr;
    CUpti_ActivityThreadIdType thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
    bool launch_attributes = false;  // stored only: kernel records always carry launch config
    std::vector<DeviceDescription> devices;
    uint32_t drop_next = 0;
    uint32_t in_flight_next = 0;  // device records to write still running (incomplete)
    // CUPTI_ACTIVITY_KIND_GRAPH_TRACE was enabled since the reset: graph-level tracing is
    // selected, and disabling the kind does not bring node-level tracing back.
    bool graph_level_tracing = false;
    // When each (device, stream) is busy until, on the clock of the timestamps: one GPU
    // timeline per device, forgotten at a reset and when the clock changes.
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> stream_busy_until;
    void (*before_completion)() = nullptr;  // around the client's completion callback
    void (*after_completion)() = nullptr;
    size_t dropped = 0;  // global queue (NULL context), since the last query
    Counters counters;
  };

  // Methods taking a Lock are called and return with it held; they may release it meanwhile.
  ExternalIdStacks& external_ids_locked();
  std::vector<Record> device_records_locked() const;
  bool install_buffer(Lock& lock, size_t record_size);
  void retire_current_locked();
  void queue_for_delivery_locked(Buffer buffer);
  void deliver(Lock& lock, Buffer buffer);
  void wait_until_idle(Lock& lock);
  void worker_main();
  void stop_worker();

  std::mutex mutex_;
  Settings settings_;
  uint64_t generation_ = 1;                  // of the external-id stacks; bumped by reset
  uint32_t next_correlation_id_ = 1;         // process-wide, never reset
  std::unordered_set<std::string> strings_;  // kernel and device names; never freed

  std::optional<Buffer> current_;  // being filled
  // Records in current_ written still running: their kind is INVALID until complete_in_flight,
  // as CUPTI's reader sees an incomplete record (a forced flush hands them over as they are).
  std::vector<std::pair<uint8_t*, CUpti_ActivityKind>> running_records_;
  std::deque<Buffer> pending_;     // completed, waiting for the worker
  size_t in_flight_ = 0;           // buffers inside a completion callback right now
  bool stopping_ = false;
  std::thread worker_;
  std::condition_variable work_cv_;  // pending_ grew, or stopping_
  std::condition_variable idle_cv_;  // a delivery finished
};

FakeCupti& fake() {
  static FakeCupti instance;
  return instance;
}

std::optional<CUptiResult> FakeCupti::injected_failure(const char* function) {
  Lock lock(mutex_);
  const auto found = settings_.failures.find(function);
  if (found == settings_.failures.end()) return std::nullopt;
  return found->second;
}

void FakeCupti::inject_failure(const char* function, CUptiResult result) {
  Lock lock(mutex_);
  if (result == CUPTI_SUCCESS) {
    settings_.failures.erase(function);
  } else {
    settings_.failures[function] = result;
  }
}

uint32_t FakeCupti::version() {
  Lock lock(mutex_);
  return settings_.version;
}

void FakeCupti::set_version(uint32_t version) {
  Lock lock(mutex_);
  settings_.version = version;
}

void FakeCupti::register_buffer_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                          CUpti_BuffersCallbackCompleteFunc complete) {
  Lock lock(mutex_);
  settings_.request = request;
  settings_.complete = complete;
}

CUptiResult FakeCupti::enable(CUpti_ActivityKind kind) {
  if (!is_activity_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  if (!record_size(kind)) return CUPTI_ERROR_NOT_SUPPORTED;
  std::vector<Record> device_records;
  {
    Lock lock(mutex_);
    const bool newly_enabled = !settings_.enabled.test(kind);
    settings_.enabled.set(kind);
    if (kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE) settings_.graph_level_tracing = true;
    // Like cuptiActivityEnableAndDump: the devices already known are reported at once.
    if (kind == CUPTI_ACTIVITY_KIND_DEVICE && newly_enabled) {
      device_records = device_records_locked();
    }
  }
  for (const Record& record : device_records) store(record);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::disable(CUpti_ActivityKind kind) {
  if (!is_activity_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  if (!record_size(kind)) return CUPTI_ERROR_NOT_SUPPORTED;
  Lock lock(mutex_);
  settings_.enabled.reset(kind);
  return CUPTI_SUCCESS;
}

void FakeCupti::set_launch_attributes(bool enabled) {
  Lock lock(mutex_);
  settings_.launch_attributes = enabled;
}

void FakeCupti::set_timestamp_callback(CUpti_TimestampCallbackFunc callback) {
  Lock lock(mutex_);
  if (settings_.timestamp != callback) settings_.stream_busy_until.clear();  // another clock
  settings_.timestamp = callback;
}

bool FakeCupti::graph_level_tracing() {
  Lock lock(mutex_);
  return settings_.graph_level_tracing;
}

uint64_t FakeCupti::queue_on_stream(uint32_t device, uint32_t stream, uint64_t ready_ns,
                                    std::optional<uint64_t> start_ns, uint64_t duration_ns) {
  Lock lock(mutex_);
  uint64_t& busy_until = settings_.stream_busy_until[{device, stream}];
  const uint64_t start = start_ns.value_or(std::max(ready_ns, busy_until));
  busy_until = std::max(busy_until, start + duration_ns);
  return start;
}

void FakeCupti::set_in_flight_next(uint32_t count) {
  Lock lock(mutex_);
  settings_.in_flight_next = count;
}

void FakeCupti::complete_in_flight() {
  Lock lock(mutex_);
  for (const auto& [record, kind] : running_records_) std::memcpy(record, &kind, sizeof(kind));
  running_records_.clear();
}

uint64_t FakeCupti::now() {
  CUpti_TimestampCallbackFunc callback = nullptr;
  {
    Lock lock(mutex_);
    callback = settings_.timestamp;
  }
  return read_clock(callback);
}

void FakeCupti::set_thread_id_type(CUpti_ActivityThreadIdType type) {
  Lock lock(mutex_);
  settings_.thread_id_type = type;
}

CUpti_ActivityThreadIdType FakeCupti::thread_id_type() {
  Lock lock(mutex_);
  return settings_.thread_id_type;
}

ExternalIdStacks& FakeCupti::external_ids_locked() {
  if (t_external_ids.generation != generation_) {
    for (auto& stack : t_external_ids.by_kind) stack.clear();
    t_external_ids.generation = generation_;
  }
  return t_external_ids;
}

void FakeCupti::push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  Lock lock(mutex_);
  external_ids_locked().by_kind[kind].push_back(id);
}

std::optional<uint64_t> FakeCupti::pop_external_id(CUpti_ExternalCorrelationKind kind) {
  Lock lock(mutex_);
  std::vector<uint64_t>& stack = external_ids_locked().by_kind[kind];
  if (stack.empty()) return std::nullopt;
  const uint64_t id = stack.back();
  stack.pop_back();
  return id;
}

int FakeCupti::external_stack_depth(CUpti_ExternalCorrelationKind kind) {
  Lock lock(mutex_);
  return static_cast<int>(external_ids_locked().by_kind[kind].size());
}

std::vector<Record> FakeCupti::device_records_locked() const {
  std::vector<Record> records;
  for (const DeviceDescription& device : settings_.devices) {
    records.push_back(pack(device_record(device)));
  }
  return records;
}

void FakeCupti::add_device(DeviceDescription device) {
  device.name = intern(device.name);
  bool report_now = false;
  {
    Lock lock(mutex_);
    auto& devices = settings_.devices;
    auto same_id = [&](const DeviceDescription& known) { return known.id == device.id; };
    devices.erase(std::remove_if(devices.begin(), devices.end(), same_id), devices.end());
    devices.push_back(device);
    report_now = settings_.enabled.test(CUPTI_ACTIVITY_KIND_DEVICE);
  }
  if (report_now) store(pack(device_record(device)));
}

const char* FakeCupti::intern(const char* text) {
  Lock lock(mutex_);
  return strings_.insert(text ? text : "").first->c_str();
}

CallSetup FakeCupti::begin_call() {
  Lock lock(mutex_);
  CallSetup setup;
  setup.correlation_id = next_correlation_id_++;
  setup.thread_id = current_thread_id(settings_.thread_id_type);
  setup.enabled = settings_.enabled;
  setup.timestamp_callback = settings_.timestamp;
  const ExternalIdStacks& stacks = external_ids_locked();
  for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
    if (!stacks.by_kind[kind].empty()) {
      setup.external_ids.emplace_back(static_cast<CUpti_ExternalCorrelationKind>(kind),
                                      stacks.by_kind[kind].back());
    }
  }
  return setup;
}

void FakeCupti::store(const Record& record) {
  Lock lock(mutex_);
  if (settings_.drop_next > 0) {
    --settings_.drop_next;
    ++settings_.dropped;
    return;
  }
  CUpti_ActivityKind kind;
  std::memcpy(&kind, record.data(), sizeof(kind));
  const size_t bytes = record_size(kind, settings_.version).value_or(record.size());
  if (!current_ || !current_->has_room_for(bytes)) {
    retire_current_locked();
    if (!install_buffer(lock, bytes)) {
      ++settings_.dropped;
      return;
    }
  }
  uint8_t* const written = current_->append(record, bytes);
  const bool device_work = kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL;
  if (device_work && settings_.in_flight_next > 0) {
    --settings_.in_flight_next;
    const CUpti_ActivityKind incomplete = CUPTI_ACTIVITY_KIND_INVALID;
    std::memcpy(written, &incomplete, sizeof(incomplete));
    running_records_.emplace_back(written, kind);
  }
  if (current_->is_full()) retire_current_locked();
}

// Asks the client for a buffer with room for a record of `record_size` bytes and makes it the
// current one. False if the client has none to give.
bool FakeCupti::install_buffer(Lock& lock, size_t record_size) {
  const CUpti_BuffersCallbackRequestFunc request = settings_.request;
  if (!request) return false;
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t max_records = 0;
  lock.unlock();
  request(&data, &size, &max_records);
  lock.lock();
  ++settings_.counters.buffers_requested;
  if (!data && settings_.version < kFirstVersionTakingNullBuffers) {
    std::fprintf(stderr, "fake_cupti: a buffer request declined (NULL) under CUPTI API version %u, "
                 "before %u: CUPTI can crash here\n", settings_.version, kFirstVersionTakingNullBuffers);
    std::abort();
  }
  if (!data) return false;
  Buffer buffer(data, size, max_records);
  if (!buffer.has_room_for(record_size)) {
    queue_for_delivery_locked(buffer);  // no use to us: hand it back empty
    return false;
  }
  retire_current_locked();  // another thread may have installed one meanwhile
  current_ = buffer;
  return true;
}

void FakeCupti::retire_current_locked() {
  if (!current_) return;
  running_records_.clear();  // handed over as they are
  queue_for_delivery_locked(*current_);
  current_.reset();
}

void FakeCupti::queue_for_delivery_locked(Buffer buffer) {
  pending_.push_back(buffer);
  if (!worker_.joinable()) worker_ = std::thread(&FakeCupti::worker_main, this);
  work_cv_.notify_one();
}

// Hands `buffer` to the completion callback on the calling thread.
void FakeCupti::deliver(Lock& lock, Buffer buffer) {
  const CUpti_BuffersCallbackCompleteFunc complete = settings_.complete;
  const auto before = settings_.before_completion;
  const auto after = settings_.after_completion;
  ++in_flight_;
  lock.unlock();
  if (complete) {
    ScopedFlag in_callback(t_in_completion_callback);
    if (before) before();
    complete(nullptr, 0, buffer.data(), buffer.size(), buffer.valid_size());
    if (after) after();
  }
  lock.lock();
  --in_flight_;
  if (complete) {
    ++settings_.counters.buffers_completed;
    settings_.counters.records_delivered += buffer.records();
  }
  idle_cv_.notify_all();
}

// Waits until no completed buffer is waiting or being delivered. From inside a completion
// callback it returns at once: that delivery cannot finish before the callback returns.
void FakeCupti::wait_until_idle(Lock& lock) {
  if (t_in_completion_callback) return;
  idle_cv_.wait(lock, [this] { return pending_.empty() && in_flight_ == 0; });
}

void FakeCupti::worker_main() {
  pthread_setname_np(pthread_self(), "fake-cupti");
  Lock lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (stopping_) return;
    Buffer buffer = pending_.front();
    pending_.pop_front();
    deliver(lock, buffer);
  }
}

// At unload or exit: buffers not yet delivered are abandoned, as the client may be gone.
void FakeCupti::stop_worker() {
  {
    Lock lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  if (!worker_.joinable()) return;
  if (worker_.get_id() == std::this_thread::get_id()) {
    worker_.detach();  // the process exits from a completion callback
  } else {
    worker_.join();
  }
}

void FakeCupti::set_completion_hooks(void (*before)(), void (*after)()) {
  Lock lock(mutex_);
  settings_.before_completion = before;
  settings_.after_completion = after;
}

void FakeCupti::drop_next(uint32_t count) {
  Lock lock(mutex_);
  settings_.drop_next = count;
}

// All buffers are global (as in CUPTI since 6.0), so drops are counted on the global queue,
// queried with a NULL context (streamId is then irrelevant). No context has a queue of its own.
size_t FakeCupti::take_dropped(CUcontext context) {
  if (context != nullptr) return 0;
  Lock lock(mutex_);
  return std::exchange(settings_.dropped, 0);
}

CUptiResult FakeCupti::flush_all() {
  if (t_in_completion_callback) return CUPTI_ERROR_INVALID_OPERATION;  // CUPTI forbids it too
  Lock lock(mutex_);
  if (!settings_.complete) return CUPTI_ERROR_INVALID_OPERATION;
  wait_until_idle(lock);  // the older, full buffers first
  if (current_) {
    Buffer buffer = *current_;
    current_.reset();
    deliver(lock, buffer);
  }
  wait_until_idle(lock);  // and whatever other threads completed meanwhile
  return CUPTI_SUCCESS;
}

// Completed buffers still reach the client; the partly filled one is abandoned, as its records
// were never flushed. No client callback runs once this returns.
void FakeCupti::finalize() {
  Lock lock(mutex_);
  current_.reset();
  wait_until_idle(lock);
  running_records_.clear();
  settings_.enabled.reset();
  settings_.graph_level_tracing = false;
  settings_.stream_busy_until.clear();
  settings_.request = nullptr;
  settings_.complete = nullptr;
  settings_.timestamp = nullptr;
  settings_.thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
}

void FakeCupti::reset(bool keep_callbacks) {
  Lock lock(mutex_);
  current_.reset();
  running_records_.clear();
  pending_.clear();
  wait_until_idle(lock);  // for a delivery in progress
  const Settings kept = settings_;
  settings_ = Settings{};
  if (keep_callbacks) {
    settings_.request = kept.request;
    settings_.complete = kept.complete;
    settings_.timestamp = kept.timestamp;
    settings_.thread_id_type = kept.thread_id_type;
  }
  ++generation_;
}

Counters FakeCupti::counters() {
  Lock lock(mutex_);
  return settings_.counters;
}

// --- Simulated CUDA calls --------------------------------------------------------------------

// Collects the records of one simulated call, keeping only those of enabled kinds.
class CallRecords {
 public:
  explicit CallRecords(const KindSet& enabled) : enabled_(enabled) {}

  template <typename T>
  void add(const T& record) {
    if (enabled_.test(record.kind)) records_.push_back(pack(record));
  }

  const KindSet& enabled() const { return enabled_; }
  const std::vector<Record>& records() const { return records_; }

 private:
  KindSet enabled_;
  std::vector<Record> records_;
};

// Adds the device-side records of a call, if it has any.
using DeviceWork = std::function<void(const ApiCall&, CallRecords&)>;

// When a simulated call ran on the host. Without `start_ns` it starts at the double's clock and
// holds the calling thread for `duration_ns`, as a real call would; with one (a constructed
// timeline, placed anywhere on the clock) it returns at once.
struct ApiTiming {
  uint64_t duration_ns = kApiDurationNs;
  std::optional<uint64_t> start_ns;
};

// When a call's device work runs: queued on its stream (std::nullopt) or at `start_ns` exactly.
struct WorkTiming {
  uint64_t duration_ns = 0;
  std::optional<uint64_t> start_ns;
};

// Simulates one CUDA API call by the calling thread: its external correlation records, its API
// record (kind RUNTIME or DRIVER), then its device work. Returns its correlation id.
uint32_t simulate_call(CUpti_ActivityKind api_kind, CUpti_CallbackId cbid, const ApiTiming& timing,
                       const DeviceWork& device_work = nullptr) {
  FakeCupti& cupti = fake();
  const CallSetup setup = cupti.begin_call();
  ApiCall call;
  call.correlation_id = setup.correlation_id;
  call.start = timing.start_ns.value_or(read_clock(setup.timestamp_callback));
  call.end = call.start + timing.duration_ns;
  call.process_id = static_cast<uint32_t>(getpid());
  call.thread_id = setup.thread_id;

  CallRecords records(setup.enabled);
  for (const auto& [external_kind, external_id] : setup.external_ids) {
    records.add(external_correlation_record(external_kind, external_id, call.correlation_id));
  }
  records.add(api_record(api_kind, cbid, call));
  if (device_work) device_work(call, records);

  for (const Record& record : records.records()) cupti.store(record);
  // A real call holds its thread for as long as its record says; so does the simulated one, so
  // that what the caller records next does not start inside it.
  while (!timing.start_ns && read_clock(setup.timestamp_callback) < call.end) {
  }
  return call.correlation_id;
}

uint32_t simulate_runtime_call(CUpti_CallbackId cbid, const DeviceWork& device_work,
                               const ApiTiming& timing = {}) {
  return simulate_call(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, timing, device_work);
}

// Where and when a call's work runs on its stream. Queued work starts shortly after the call
// returns and after the stream's previous work, as on a GPU; work placed at a time starts then,
// and queued work after it still waits for it.
DeviceSpan on_stream(const ApiCall& call, uint32_t device, uint32_t context, uint32_t stream,
                     const WorkTiming& work) {
  const uint64_t start = fake().queue_on_stream(device, stream, call.end + kLaunchLatencyNs,
                                                work.start_ns, work.duration_ns);
  return DeviceSpan{device, context, stream, start, start + work.duration_ns};
}

// A kernel launch through the runtime (cudaLaunchKernel) or, `through_driver`, through the
// driver alone (cuLaunchKernel, as Triton's kernels are launched): then only a DRIVER record
// links the kernel to the host.
uint32_t launch_kernel(const KernelLaunch& launch, uint32_t device, uint32_t context,
                       uint32_t stream, const ApiTiming& api, const WorkTiming& work,
                       bool through_driver = false) {
  measure_kernel_launch(context, launch.name);
  const DeviceWork kernel = [&](const ApiCall& call, CallRecords& records) {
    const DeviceSpan span = on_stream(call, device, context, stream, work);
    records.add(kernel_record(kernel_kind(records.enabled()), launch, span, call.correlation_id));
  };
  if (through_driver) {
    return simulate_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, api, kernel);
  }
  return simulate_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, kernel, api);
}

// cudaGraphLaunch of a graph of `nodes` kernel nodes, run one after another on `stream`. With
// node-level tracing (CUPTI's default) each node is a kernel record with the launch's
// correlation id and its graph and node ids; once graph-level tracing was selected, one
// GRAPH_TRACE record (when that kind is enabled) spans them all and no kernel record is made.
uint32_t launch_graph(uint32_t device, uint32_t context, uint32_t stream, uint32_t graph_id,
                      uint32_t nodes, uint64_t node_duration_ns) {
  const bool graph_level = fake().graph_level_tracing();
  const DeviceWork graph = [&](const ApiCall& call, CallRecords& records) {
    uint64_t first_start = 0;
    uint64_t last_end = 0;
    for (uint32_t node = 1; node <= nodes; ++node) {
      const DeviceSpan span = on_stream(call, device, context, stream, {node_duration_ns, std::nullopt});
      if (node == 1) first_start = span.start;
      last_end = span.end;
      if (graph_level) continue;
      KernelLaunch launch;
      const std::string name = "graph " + std::to_string(graph_id) + " node " + std::to_string(node);
      launch.name = fake().intern(name.c_str());
      launch.graph_id = graph_id;
      launch.graph_node_id = node;
      records.add(kernel_record(kernel_kind(records.enabled()), launch, span, call.correlation_id));
    }
    if (graph_level) {
      records.add(graph_trace_record(graph_id, DeviceSpan{device, context, stream, first_start, last_end},
                                     call.correlation_id));
    }
  };
  return simulate_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, graph);
}

uint32_t copy_memory(uint64_t bytes, uint8_t copy_kind, uint32_t device, uint32_t context,
                     uint32_t stream, const ApiTiming& api, const WorkTiming& work) {
  const DeviceWork copy = [&](const ApiCall& call, CallRecords& records) {
    const DeviceSpan span = on_stream(call, device, context, stream, work);
    records.add(memcpy_record(bytes, copy_kind, span, call.correlation_id));
  };
  return simulate_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, copy, api);
}

uint32_t set_memory(uint64_t bytes, uint32_t value, uint32_t device, uint32_t context,
                    uint32_t stream, const ApiTiming& api, const WorkTiming& work) {
  const DeviceWork set = [&](const ApiCall& call, CallRecords& records) {
    const DeviceSpan span = on_stream(call, device, context, stream, work);
    records.add(memset_record(bytes, value, span, call.correlation_id));
  };
  return simulate_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, set, api);
}

// --- Another CUPTI client ----------------------------------------------------------------------

// What torch.profiler's Kineto does to CUPTI in a CUDA session of its own: registers its buffer
// callbacks and its timestamp callback (another clock), enables kinds, records a kernel launch,
// flushes and disables them, and maybe finalizes CUPTI, which forgets every callback.
constexpr size_t kOtherClientBufferBytes = 64 << 10;

// Its buffers: a buffer CUPTI held for the client before (handed to this client's callback once
// it registered) is not its to free, and is left alone, as libkineto does with a buffer it does
// not know.
std::mutex g_other_client_mutex;
std::unordered_set<uint8_t*> g_other_client_buffers;

void CUPTIAPI other_client_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kOtherClientBufferBytes));
  *size = *buffer ? kOtherClientBufferBytes : 0;
  *max_records = 0;
  std::lock_guard<std::mutex> lock(g_other_client_mutex);
  if (*buffer) g_other_client_buffers.insert(*buffer);
}

void CUPTIAPI other_client_complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) {
  std::lock_guard<std::mutex> lock(g_other_client_mutex);
  if (g_other_client_buffers.erase(buffer)) std::free(buffer);
}

uint64_t CUPTIAPI other_client_clock() { return realtime_ns(); }

void other_client_session(FakeCupti& cupti, bool finalize) {
  cupti.register_buffer_callbacks(other_client_request, other_client_complete);
  cupti.set_timestamp_callback(other_client_clock);
  for (const CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME}) {
    cupti.enable(kind);
  }
  launch_kernel(KernelLaunch{cupti.intern("other client's kernel"), 1, 1, 32, 0, 0}, 0, 1, 7, {},
                {1'000, std::nullopt});
  cupti.flush_all();
  for (const CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME}) {
    cupti.disable(kind);
  }
  if (finalize) cupti.finalize();
}

// --- Entry point plumbing --------------------------------------------------------------------

// Runs the body of the CUPTI entry point `function`: an injected failure wins, and no
// exception crosses the C boundary.
template <typename Body>
CUptiResult cupti_entry(const char* function, Body&& body) noexcept {
  try {
    if (const auto failure = fake().injected_failure(function)) return *failure;
    return body(fake());
  } catch (...) {
    return CUPTI_ERROR_UNKNOWN;
  }
}

// Runs the body of a control function; on an exception it returns a zero value.
template <typename Body>
auto control_entry(Body&& body) noexcept -> decltype(body(fake())) {
  try {
    return body(fake());
  } catch (...) {
    if constexpr (!std::is_void_v<decltype(body(fake()))>) return {};
  }
}

struct ResultName {
  CUptiResult result;
  const char* name;
};

#define FAKE_CUPTI_RESULT_NAME(result) \
  ResultName { result, #result }
constexpr ResultName kResultNames[] = {
    FAKE_CUPTI_RESULT_NAME(CUPTI_SUCCESS),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_PARAMETER),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_DEVICE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_CONTEXT),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_EVENT_ID),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_EVENT_NAME),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_OPERATION),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_OUT_OF_MEMORY),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_HARDWARE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_API_NOT_IMPLEMENTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_MAX_LIMIT_REACHED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_NOT_READY),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_NOT_COMPATIBLE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_NOT_INITIALIZED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_METRIC_ID),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_METRIC_NAME),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_QUEUE_EMPTY),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_HANDLE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_STREAM),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_KIND),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_EVENT_VALUE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_DISABLED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_MODULE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_METRIC_VALUE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_HARDWARE_BUSY),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_INVALID_CHIP_NAME),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_HES_TRACE_NOT_SUPPORTED_ON_MPS),
    FAKE_CUPTI_RESULT_NAME(CUPTI_ERROR_UNKNOWN),
};
#undef FAKE_CUPTI_RESULT_NAME

const char* result_name(CUptiResult result) {
  for (const ResultName& entry : kResultNames) {
    if (entry.result == result) return entry.name;
  }
  return nullptr;
}

CUptiResult next_record(uint8_t* buffer, size_t valid_size, CUpti_Activity** record) {
  if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
  uint8_t* const end = buffer + valid_size;
  uint8_t* next = first_record_address(buffer);
  if (*record) {
    auto* const previous = reinterpret_cast<uint8_t*>(*record);
    if (previous < buffer || previous >= end) return CUPTI_ERROR_INVALID_PARAMETER;
    const auto previous_size = record_size((*record)->kind, fake().version());
    if (!previous_size) return CUPTI_ERROR_INVALID_KIND;
    next = previous + *previous_size;
  }
  if (next >= end) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (static_cast<size_t>(end - next) < sizeof(CUpti_Activity)) return CUPTI_ERROR_INVALID_KIND;
  CUpti_ActivityKind kind;
  std::memcpy(&kind, next, sizeof(kind));
  const auto size = record_size(kind, fake().version());
  if (!size || *size > static_cast<size_t>(end - next)) return CUPTI_ERROR_INVALID_KIND;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult struct_size(CUpti_ActivityKind kind, uint32_t version, size_t* size) {
  if (!size) return CUPTI_ERROR_INVALID_PARAMETER;
  if (version != 0 && version < kFirstVersionWithStructSizes) return CUPTI_ERROR_NOT_SUPPORTED;
  if (!is_activity_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  // Version 0: the records this CUPTI writes (12.x-size ones while it reports a 12.x version).
  const auto bytes = version == 0 ? record_size(kind, fake().version()) : record_size(kind);
  if (!bytes) return CUPTI_ERROR_NOT_SUPPORTED;  // a real kind, but not one the double writes
  *size = *bytes;
  return CUPTI_SUCCESS;
}

}  // namespace
}  // namespace fake_cupti

using fake_cupti::control_entry;
using fake_cupti::cupti_entry;
using fake_cupti::FakeCupti;

// --- CUPTI entry points (declared, with default visibility, by the CUPTI headers) ------------

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
    *version = cupti.version();
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  return cupti_entry(__func__, [&](FakeCupti&) {
    const char* name = fake_cupti::result_name(result);
    if (!str || !name) return CUPTI_ERROR_INVALID_PARAMETER;
    *str = name;
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!funcBufferRequested || !funcBufferCompleted) return CUPTI_ERROR_INVALID_PARAMETER;
    cupti.register_buffer_callbacks(funcBufferRequested, funcBufferCompleted);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    // A failure injected as "cuptiActivityEnable:<kind>" refuses that kind alone.
    const std::string for_kind = "cuptiActivityEnable:" + std::to_string(static_cast<int>(kind));
    if (const auto failure = cupti.injected_failure(for_kind.c_str())) return *failure;
    return cupti.enable(kind);
  });
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) { return cupti.disable(kind); });
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t /*flag: every record is complete*/) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) { return cupti.flush_all(); });
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity** record) {
  return cupti_entry(__func__, [&](FakeCupti&) {
    return fake_cupti::next_record(buffer, validBufferSizeBytes, record);
  });
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t /*streamId*/,
                                                       size_t* dropped) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
    *dropped = cupti.take_dropped(context);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!fake_cupti::is_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    cupti.push_external_id(kind, id);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t* lastId) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!fake_cupti::is_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    const auto id = cupti.pop_external_id(kind);
    if (!id) return CUPTI_ERROR_QUEUE_EMPTY;
    if (lastId) *lastId = *id;
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = cupti.now();
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!funcTimestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    cupti.set_timestamp_callback(funcTimestamp);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
        type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
      return CUPTI_ERROR_NOT_SUPPORTED;
    }
    cupti.set_thread_id_type(type);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    if (!type) return CUPTI_ERROR_INVALID_PARAMETER;
    *type = cupti.thread_id_type();
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityGetStructSize(CUpti_ActivityKind activityKind, uint32_t version,
                                                size_t* activityStructSize) {
  return cupti_entry(__func__, [&](FakeCupti&) {
    return fake_cupti::struct_size(activityKind, version, activityStructSize);
  });
}

CUptiResult CUPTIAPI cuptiActivityEnableLaunchAttributes(uint8_t enable) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    cupti.set_launch_attributes(enable != 0);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiFinalize(void) {
  return cupti_entry(__func__, [&](FakeCupti& cupti) {
    cupti.finalize();
    return CUPTI_SUCCESS;
  });
}

// --- Control API (fake_cupti_control.h) ------------------------------------------------------

void fake_cupti_reset(void) {
  control_entry([](FakeCupti& cupti) {
    cupti.reset(false);
    fake_cupti::reset_kernel_metrics();
  });
}

void fake_cupti_reset_keeping_callbacks(void) {
  control_entry([](FakeCupti& cupti) {
    cupti.reset(true);
    fake_cupti::reset_kernel_metrics();
  });
}

void fake_cupti_set_version(uint32_t version) {
  control_entry([&](FakeCupti& cupti) { cupti.set_version(version); });
}

void fake_cupti_fail(const char* function_name, int result) {
  if (!function_name) return;
  control_entry([&](FakeCupti& cupti) {
    cupti.inject_failure(function_name, static_cast<CUptiResult>(result));
  });
}

uint64_t fake_cupti_now(void) {
  return control_entry([](FakeCupti& cupti) { return cupti.now(); });
}

void fake_cupti_add_device(uint32_t id, const char* name, uint32_t sm_count,
                           uint64_t global_memory_bytes, uint32_t cc_major, uint32_t cc_minor) {
  control_entry([&](FakeCupti& cupti) {
    cupti.add_device({id, name, sm_count, global_memory_bytes, cc_major, cc_minor});
  });
}

uint32_t fake_cupti_launch_kernel(const char* name, uint32_t device, uint32_t context_id,
                                  uint32_t stream, uint64_t gpu_duration_ns, uint32_t grid_x,
                                  uint32_t block_x, uint16_t registers_per_thread,
                                  int32_t static_shared, uint32_t dynamic_shared) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti& cupti) {
    const KernelLaunch launch{cupti.intern(name),   grid_x,        block_x,
                              registers_per_thread, static_shared, dynamic_shared};
    return launch_kernel(launch, device, context_id, stream, {}, {gpu_duration_ns, std::nullopt});
  });
}

uint32_t fake_cupti_launch_kernel_at(const char* name, uint32_t device, uint32_t context_id,
                                     uint32_t stream, uint64_t api_start_ns,
                                     uint64_t api_duration_ns, uint64_t gpu_start_ns,
                                     uint64_t gpu_duration_ns) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti& cupti) {
    const KernelLaunch launch{cupti.intern(name), 128, 256, 32, 0, 0};
    return launch_kernel(launch, device, context_id, stream, {api_duration_ns, api_start_ns},
                         {gpu_duration_ns, gpu_start_ns});
  });
}

uint32_t fake_cupti_memcpy(uint64_t bytes, uint8_t copy_kind, uint32_t device, uint32_t context_id,
                           uint32_t stream, uint64_t gpu_duration_ns) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti&) {
    return copy_memory(bytes, copy_kind, device, context_id, stream, {},
                       {gpu_duration_ns, std::nullopt});
  });
}

uint32_t fake_cupti_memcpy_at(uint64_t bytes, uint8_t copy_kind, uint32_t device,
                              uint32_t context_id, uint32_t stream, uint64_t api_start_ns,
                              uint64_t api_duration_ns, uint64_t gpu_start_ns,
                              uint64_t gpu_duration_ns) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti&) {
    return copy_memory(bytes, copy_kind, device, context_id, stream,
                       {api_duration_ns, api_start_ns}, {gpu_duration_ns, gpu_start_ns});
  });
}

uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value, uint32_t device, uint32_t context_id,
                           uint32_t stream, uint64_t gpu_duration_ns) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti&) {
    return set_memory(bytes, value, device, context_id, stream, {},
                      {gpu_duration_ns, std::nullopt});
  });
}

uint32_t fake_cupti_memset_at(uint64_t bytes, uint32_t value, uint32_t device,
                              uint32_t context_id, uint32_t stream, uint64_t api_start_ns,
                              uint64_t api_duration_ns, uint64_t gpu_start_ns,
                              uint64_t gpu_duration_ns) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti&) {
    return set_memory(bytes, value, device, context_id, stream, {api_duration_ns, api_start_ns},
                      {gpu_duration_ns, gpu_start_ns});
  });
}

uint32_t fake_cupti_driver_launch_kernel(const char* name, uint32_t device, uint32_t context_id,
                                         uint32_t stream, uint64_t gpu_duration_ns) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti& cupti) {
    const KernelLaunch launch{cupti.intern(name), 128, 256, 32, 0, 0};
    return launch_kernel(launch, device, context_id, stream, {}, {gpu_duration_ns, std::nullopt},
                         /*through_driver=*/true);
  });
}

uint32_t fake_cupti_driver_call(uint32_t cbid, uint64_t duration_ns) {
  return control_entry([&](FakeCupti&) {
    return fake_cupti::simulate_call(CUPTI_ACTIVITY_KIND_DRIVER, cbid, {duration_ns, std::nullopt});
  });
}

uint32_t fake_cupti_synchronize(uint32_t device, uint32_t context_id, uint32_t stream,
                                uint64_t duration_ns) {
  using namespace fake_cupti;
  return control_entry([&](FakeCupti&) {
    const DeviceWork wait = [&](const ApiCall& call, CallRecords& records) {
      const DeviceSpan waited{device, context_id, stream, call.start, call.end};
      records.add(stream_synchronize_record(waited, call.correlation_id));
    };
    return simulate_call(CUPTI_ACTIVITY_KIND_RUNTIME,
                         CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                         {duration_ns, std::nullopt}, wait);
  });
}

uint32_t fake_cupti_malloc(uint64_t address, uint64_t bytes, uint32_t device, int is_free) {
  using namespace fake_cupti;
  const CUpti_CallbackId cbid =
      is_free ? CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020 : CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
  const CUpti_ActivityMemoryOperationType operation =
      is_free ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
              : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  return control_entry([&](FakeCupti&) {
    const DeviceWork memory = [&](const ApiCall& call, CallRecords& records) {
      records.add(memory_record(operation, address, bytes, device, call));
    };
    return simulate_runtime_call(cbid, memory);
  });
}

uint32_t fake_cupti_graph_launch(uint32_t device, uint32_t context_id, uint32_t stream,
                                 uint32_t graph_id, uint32_t nodes, uint64_t node_duration_ns) {
  return control_entry([&](FakeCupti&) {
    return fake_cupti::launch_graph(device, context_id, stream, graph_id, nodes, node_duration_ns);
  });
}

void fake_cupti_set_in_flight(uint32_t count) {
  control_entry([&](FakeCupti& cupti) { cupti.set_in_flight_next(count); });
}

void fake_cupti_other_client_session(int finalize) {
  control_entry([&](FakeCupti& cupti) { fake_cupti::other_client_session(cupti, finalize != 0); });
}

void fake_cupti_set_completion_hooks(void (*before)(void), void (*after)(void)) {
  control_entry([&](FakeCupti& cupti) { cupti.set_completion_hooks(before, after); });
}

void fake_cupti_drop_next(uint32_t count) {
  control_entry([&](FakeCupti& cupti) { cupti.drop_next(count); });
}

size_t fake_cupti_buffers_requested(void) {
  return control_entry([](FakeCupti& cupti) { return cupti.counters().buffers_requested; });
}

size_t fake_cupti_buffers_completed(void) {
  return control_entry([](FakeCupti& cupti) { return cupti.counters().buffers_completed; });
}

size_t fake_cupti_records_delivered(void) {
  return control_entry([](FakeCupti& cupti) { return cupti.counters().records_delivered; });
}

int fake_cupti_external_stack_depth(int kind) {
  if (!fake_cupti::is_external_kind(kind)) return -1;
  return control_entry([&](FakeCupti& cupti) {
    return cupti.external_stack_depth(static_cast<CUpti_ExternalCorrelationKind>(kind));
  });
}

}  // extern "C"

// --- Stand-ins beyond the activity API ------------------------------------------------------
// The CUDA driver entry points perfprof probes, callback names and stream ids. Kept apart from
// the engine: they have no activity state.

namespace {

std::atomic<int> g_driver_init_result{0};
std::atomic<int> g_driver_device_count{1};
std::atomic<uint32_t> g_current_context{0};  // the context id cuCtxGetCurrent reports; 0: none
std::atomic<uint32_t> g_current_device{0};
std::atomic<uint64_t> g_context_synchronizations{0};

const char* runtime_callback_name(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: return "cudaLaunchKernel_v7000";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: return "cudaMemcpyAsync_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: return "cudaMemsetAsync_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020: return "cudaStreamSynchronize_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: return "cudaMalloc_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: return "cudaFree_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000: return "cudaGraphLaunch_v10000";
    default: return nullptr;
  }
}

const char* driver_callback_name(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return "cuLaunchKernel";
    case CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent: return "cuCtxGetCurrent";
    default: return nullptr;
  }
}

}  // namespace

extern "C" {

FAKE_CUPTI_API CUresult CUDAAPI cuInit(unsigned int /*flags*/) {
  return static_cast<CUresult>(g_driver_init_result.load());
}

FAKE_CUPTI_API CUresult CUDAAPI cuDeviceGetCount(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = g_driver_device_count.load();
  return CUDA_SUCCESS;
}

void fake_cupti_set_driver(int init_result, int device_count) {
  g_driver_init_result.store(init_result);
  g_driver_device_count.store(device_count);
}

// Context handle N is context id N (as for the range profiler's CUcontext handles).
FAKE_CUPTI_API CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
  if (!context) return CUDA_ERROR_INVALID_VALUE;
  *context = reinterpret_cast<CUcontext>(static_cast<uintptr_t>(g_current_context.load()));
  return CUDA_SUCCESS;
}

// The work queued so far has finished: its records are complete.
FAKE_CUPTI_API CUresult CUDAAPI cuCtxSynchronize() {
  if (g_current_context.load() == 0) return CUDA_ERROR_INVALID_CONTEXT;
  g_context_synchronizations.fetch_add(1);
  control_entry([](FakeCupti& cupti) { cupti.complete_in_flight(); });
  return CUDA_SUCCESS;
}

void fake_cupti_set_current_context(uint32_t context_id, uint32_t device) {
  g_current_device.store(device);
  g_current_context.store(context_id);
}

uint64_t fake_cupti_context_synchronizations(void) { return g_context_synchronizations.load(); }

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  if (!context || !contextId) return CUPTI_ERROR_INVALID_PARAMETER;
  *contextId = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(context));
  return CUPTI_SUCCESS;
}

// Every context is on the device of the last fake_cupti_set_current_context.
CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t* deviceId) {
  if (!context || !deviceId) return CUPTI_ERROR_INVALID_PARAMETER;
  *deviceId = g_current_device.load();
  return CUPTI_SUCCESS;
}

// Runtime callbacks the double simulates are named as CUPTI names them ("cudaLaunchKernel_v7000").
CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* known = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? runtime_callback_name(cbid)
                      : domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_callback_name(cbid)
                                                             : nullptr;
  if (!known) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = known;
  return CUPTI_SUCCESS;
}

// The double's streams are numbered: the stream handle N is stream id N.
CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext /*context*/, CUstream stream, uint8_t /*perThreadStream*/,
                                        uint32_t* streamId) {
  if (!streamId) return CUPTI_ERROR_INVALID_PARAMETER;
  *streamId = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(stream));
  return CUPTI_SUCCESS;
}

}  // extern "C"


// --- Per-kernel metrics: the Profiler Host and Range Profiler APIs --------------------------
// Written from cupti_target.h, cupti_profiler_target.h, cupti_profiler_host.h and
// cupti_range_profiler.h. A CUcontext handle N is the double's context N, the context_id of
// the fake_cupti_launch_kernel* functions. While a context's range profiler is started, each
// kernel launched on it is an auto range: ranges are numbered in launch order and hold, for each
// metric of the configuration, the value fake_cupti_set_kernel_metric gave the kernel's name when
// it was launched. Config, counter availability and counter data images are byte layouts of the
// double's own, as opaque to clients as CUPTI's; host and range profiler objects are handles the
// double looks up, never dereferences.

namespace fake_cupti {
namespace {

// A params struct is accepted when it is there, its pPriv is NULL as the headers ask, and its
// structSize covers every field the double reads (`required`); fields past structSize are
// neither read nor written, which is how CUPTI keeps older clients working.
template <typename Params>
bool valid(const Params* params, size_t required) {
  return params && params->structSize >= required && params->pPriv == nullptr;
}
#define FAKE_CUPTI_VALID(params, Type) valid(params, Type##_STRUCT_SIZE)

std::string base_metric_of(const std::string& metric) { return metric.substr(0, metric.find('.')); }

// --- Images ----------------------------------------------------------------------------------

constexpr size_t kMagicSize = 8;
constexpr char kConfigMagic[kMagicSize] = "FKCONFG";
constexpr char kAvailabilityMagic[kMagicSize] = "FKAVAIL";
constexpr char kCounterDataMagic[kMagicSize] = "FKCOUNT";

class ImageWriter {
 public:
  void bytes(const void* data, size_t size) {
    const auto* first = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), first, first + size);
  }
  void u32(uint32_t value) { bytes(&value, sizeof(value)); }
  void text(const std::string& value) {
    u32(static_cast<uint32_t>(value.size()));
    bytes(value.data(), value.size());
  }
  std::vector<uint8_t>& result() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads what ImageWriter wrote; any read past the end makes ok() false.
class ImageReader {
 public:
  ImageReader(const uint8_t* data, size_t size) : data_(data), size_(data ? size : 0) {}
  bool magic(const char (&expected)[kMagicSize]) {
    return take(kMagicSize) && std::memcmp(data_ + at_ - kMagicSize, expected, kMagicSize) == 0;
  }
  uint32_t u32() {
    uint32_t value = 0;
    if (take(sizeof(value))) std::memcpy(&value, data_ + at_ - sizeof(value), sizeof(value));
    return value;
  }
  std::string text() {
    const uint32_t length = u32();
    if (!take(length)) return {};
    return std::string(reinterpret_cast<const char*>(data_ + at_ - length), length);
  }
  bool ok() const { return ok_; }
  size_t position() const { return at_; }

 private:
  bool take(size_t count) {
    ok_ = ok_ && count <= size_ - at_;
    if (ok_) at_ += count;
    return ok_;
  }

  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
  bool ok_ = true;
};

// A config image: the metrics to collect and the passes they take.
struct ConfigImage {
  std::vector<std::string> metrics;
  uint32_t passes = 1;

  std::vector<uint8_t> bytes() const {
    ImageWriter out;
    out.bytes(kConfigMagic, kMagicSize);
    out.u32(passes);
    out.u32(static_cast<uint32_t>(metrics.size()));
    for (const std::string& metric : metrics) out.text(metric);
    return std::move(out.result());
  }

  static std::optional<ConfigImage> read(const uint8_t* data, size_t size) {
    ImageReader in(data, size);
    ConfigImage image;
    if (!in.magic(kConfigMagic)) return std::nullopt;
    image.passes = in.u32();
    for (uint32_t count = in.u32(); in.ok() && count > 0; --count) image.metrics.push_back(in.text());
    if (!in.ok()) return std::nullopt;
    return image;
  }
};

// A counter data image: a header (magic, metric count, capacity in ranges, ranges held, the
// metric names), padded to 8 bytes, then one double per metric per range.
struct CounterDataLayout {
  std::vector<std::string> metrics;
  uint32_t capacity = 0;

  static constexpr size_t kRangesOffset = kMagicSize + 2 * sizeof(uint32_t);

  std::vector<uint8_t> header() const {
    ImageWriter out;
    out.bytes(kCounterDataMagic, kMagicSize);
    out.u32(static_cast<uint32_t>(metrics.size()));
    out.u32(capacity);
    out.u32(0);  // ranges held
    for (const std::string& metric : metrics) out.text(metric);
    std::vector<uint8_t>& bytes = out.result();
    bytes.resize(values_offset());
    return std::move(bytes);
  }
  size_t values_offset() const {
    size_t bytes = kRangesOffset + sizeof(uint32_t);
    for (const std::string& metric : metrics) bytes += sizeof(uint32_t) + metric.size();
    return (bytes + 7) / 8 * 8;
  }
  size_t size() const { return values_offset() + size_t{capacity} * metrics.size() * sizeof(double); }
  size_t value_offset(size_t range, size_t metric) const {
    return values_offset() + (range * metrics.size() + metric) * sizeof(double);
  }

  // The layout of an image of `size` bytes, and the ranges it holds; nullopt if it is not one.
  static std::optional<CounterDataLayout> read(const uint8_t* data, size_t size, uint32_t* ranges) {
    ImageReader in(data, size);
    CounterDataLayout layout;
    if (!in.magic(kCounterDataMagic)) return std::nullopt;
    const uint32_t count = in.u32();
    layout.capacity = in.u32();
    *ranges = in.u32();
    for (uint32_t i = 0; in.ok() && i < count; ++i) layout.metrics.push_back(in.text());
    if (!in.ok() || layout.size() > size || *ranges > layout.capacity) return std::nullopt;
    return layout;
  }
};

// --- State -----------------------------------------------------------------------------------

// A chip's base metrics, by CUpti_MetricType.
using ChipMetrics = std::array<std::vector<std::string>, CUPTI_METRIC_TYPE__COUNT>;

struct HostObject {
  std::string chip;
  ChipMetrics base_metrics;
  // What GetBaseMetrics hands out: pointers into base_metrics.
  std::array<std::vector<const char*>, CUPTI_METRIC_TYPE__COUNT> base_metric_names;
  std::vector<std::string> config_metrics;  // ConfigAddMetrics', in order, each once
};

struct RangeProfilerObject {
  uint32_t context = 0;
  std::optional<CounterDataLayout> sized;  // by the last GetCounterDataSize
  // Set by SetConfig.
  bool configured = false;
  std::vector<std::string> config_metrics;
  uint8_t* counter_data = nullptr;
  CounterDataLayout layout;
  size_t capacity = 0;  // ranges a window holds: the image's, at most maxRangesPerPass
  // The window (since SetConfig).
  bool started = false;
  size_t ranges = 0;                          // measured, decoded or not
  std::vector<std::vector<double>> pending;   // measured, not decoded: values per config metric
  size_t dropped = 0;                         // past capacity, since the last decode
};

class FakeMetrics {
 public:
  void set_device_chip(uint32_t device, const char* chip);
  void add_chip_metric(const char* chip, int type, const char* base_metric);
  void set_kernel_metric(const char* kernel, const char* metric, double value);
  void set_metrics_per_pass(size_t count);
  void last_config(int* range, int* replay, size_t* max_ranges_per_pass);
  void objects(int* initialized, size_t* hosts, size_t* range_profilers);
  void kernel_launched(uint32_t context, const char* kernel);
  void reset();

  CUptiResult initialize(CUpti_Profiler_Initialize_Params* p);
  CUptiResult deinitialize(CUpti_Profiler_DeInitialize_Params* p);
  CUptiResult chip_name(CUpti_Device_GetChipName_Params* p);
  CUptiResult counter_availability(CUpti_Profiler_GetCounterAvailability_Params* p);
  CUptiResult host_initialize(CUpti_Profiler_Host_Initialize_Params* p);
  CUptiResult host_deinitialize(CUpti_Profiler_Host_Deinitialize_Params* p);
  CUptiResult base_metrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p);
  CUptiResult add_metrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p);
  CUptiResult config_image_size(CUpti_Profiler_Host_GetConfigImageSize_Params* p);
  CUptiResult config_image(CUpti_Profiler_Host_GetConfigImage_Params* p);
  CUptiResult passes(CUpti_Profiler_Host_GetNumOfPasses_Params* p);
  CUptiResult evaluate(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p);
  CUptiResult enable(CUpti_RangeProfiler_Enable_Params* p);
  CUptiResult disable(CUpti_RangeProfiler_Disable_Params* p);
  CUptiResult counter_data_size(CUpti_RangeProfiler_GetCounterDataSize_Params* p);
  CUptiResult counter_data_initialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p);
  CUptiResult set_config(CUpti_RangeProfiler_SetConfig_Params* p);
  CUptiResult start(CUpti_RangeProfiler_Start_Params* p);
  CUptiResult stop(CUpti_RangeProfiler_Stop_Params* p);
  CUptiResult decode(CUpti_RangeProfiler_DecodeData_Params* p);
  CUptiResult counter_data_info(CUpti_RangeProfiler_GetCounterDataInfo_Params* p);

 private:
  using Lock = std::lock_guard<std::mutex>;

  HostObject* host(CUpti_Profiler_Host_Object* handle);
  RangeProfilerObject* range_profiler(CUpti_RangeProfiler_Object* handle);
  bool chip_has(const std::string& chip, const std::string& metric) const;
  uint32_t passes_for(size_t metric_count) const;

  std::mutex mutex_;
  bool initialized_ = false;  // cuptiProfilerInitialize'd
  std::map<uint32_t, std::string> device_chips_;
  std::map<std::string, ChipMetrics> chips_;
  std::map<std::string, std::map<std::string, double>> kernel_values_;  // kernel -> metric -> value
  size_t metrics_per_pass_ = 0;                                          // 0: all in one pass
  int last_range_ = 0;
  int last_replay_ = 0;
  size_t last_max_ranges_per_pass_ = 0;
  std::map<const void*, std::unique_ptr<HostObject>> hosts_;
  std::map<const void*, std::unique_ptr<RangeProfilerObject>> range_profilers_;
};

FakeMetrics& kernel_metrics() {
  static FakeMetrics instance;
  return instance;
}

void measure_kernel_launch(uint32_t context, const char* kernel_name) {
  kernel_metrics().kernel_launched(context, kernel_name);
}

void reset_kernel_metrics() { kernel_metrics().reset(); }

// --- Controls --------------------------------------------------------------------------------

void FakeMetrics::set_device_chip(uint32_t device, const char* chip) {
  Lock lock(mutex_);
  device_chips_[device] = chip;
}

void FakeMetrics::add_chip_metric(const char* chip, int type, const char* base_metric) {
  if (type < 0 || type >= CUPTI_METRIC_TYPE__COUNT) return;
  Lock lock(mutex_);
  chips_[chip][type].emplace_back(base_metric);
}

void FakeMetrics::set_kernel_metric(const char* kernel, const char* metric, double value) {
  Lock lock(mutex_);
  kernel_values_[kernel][metric] = value;
}

void FakeMetrics::set_metrics_per_pass(size_t count) {
  Lock lock(mutex_);
  metrics_per_pass_ = count;
}

void FakeMetrics::last_config(int* range, int* replay, size_t* max_ranges_per_pass) {
  Lock lock(mutex_);
  if (range) *range = last_range_;
  if (replay) *replay = last_replay_;
  if (max_ranges_per_pass) *max_ranges_per_pass = last_max_ranges_per_pass_;
}

void FakeMetrics::objects(int* initialized, size_t* hosts, size_t* range_profilers) {
  Lock lock(mutex_);
  if (initialized) *initialized = initialized_ ? 1 : 0;
  if (hosts) *hosts = hosts_.size();
  if (range_profilers) *range_profilers = range_profilers_.size();
}

// Past the window's capacity a kernel is not measured, only counted: DecodeData reports it.
void FakeMetrics::kernel_launched(uint32_t context, const char* kernel) {
  Lock lock(mutex_);
  for (auto& [handle, profiler] : range_profilers_) {
    if (profiler->context != context || !profiler->started) continue;
    if (profiler->ranges >= profiler->capacity) {
      ++profiler->dropped;
      continue;
    }
    const auto known = kernel_values_.find(kernel ? kernel : "");
    std::vector<double> values;
    for (const std::string& metric : profiler->config_metrics) {
      double value = 0;
      if (known != kernel_values_.end()) {
        const auto found = known->second.find(metric);
        if (found != known->second.end()) value = found->second;
      }
      values.push_back(value);
    }
    profiler->pending.push_back(std::move(values));
    ++profiler->ranges;
  }
}

void FakeMetrics::reset() {
  Lock lock(mutex_);
  initialized_ = false;
  device_chips_.clear();
  chips_.clear();
  kernel_values_.clear();
  metrics_per_pass_ = 0;
  last_range_ = last_replay_ = 0;
  last_max_ranges_per_pass_ = 0;
  hosts_.clear();
  range_profilers_.clear();
}

// --- Lookups ---------------------------------------------------------------------------------

HostObject* FakeMetrics::host(CUpti_Profiler_Host_Object* handle) {
  const auto found = hosts_.find(handle);
  return found == hosts_.end() ? nullptr : found->second.get();
}

RangeProfilerObject* FakeMetrics::range_profiler(CUpti_RangeProfiler_Object* handle) {
  const auto found = range_profilers_.find(handle);
  return found == range_profilers_.end() ? nullptr : found->second.get();
}

bool FakeMetrics::chip_has(const std::string& chip, const std::string& metric) const {
  const auto known = chips_.find(chip);
  if (known == chips_.end()) return false;
  const std::string base = base_metric_of(metric);
  for (const auto& of_type : known->second) {
    if (std::find(of_type.begin(), of_type.end(), base) != of_type.end()) return true;
  }
  return false;
}

uint32_t FakeMetrics::passes_for(size_t metric_count) const {
  if (metrics_per_pass_ == 0 || metric_count == 0) return 1;
  return static_cast<uint32_t>((metric_count + metrics_per_pass_ - 1) / metrics_per_pass_);
}

// --- Target: initialisation, chip, counter availability --------------------------------------

CUptiResult FakeMetrics::initialize(CUpti_Profiler_Initialize_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Initialize_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock lock(mutex_);
  initialized_ = true;
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::deinitialize(CUpti_Profiler_DeInitialize_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_DeInitialize_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock lock(mutex_);
  initialized_ = false;
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::chip_name(CUpti_Device_GetChipName_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Device_GetChipName_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock lock(mutex_);
  if (!initialized_) return CUPTI_ERROR_NOT_INITIALIZED;
  const auto found = device_chips_.find(static_cast<uint32_t>(p->deviceIndex));
  if (found == device_chips_.end()) return CUPTI_ERROR_INVALID_DEVICE;
  p->pChipName = found->second.c_str();
  return CUPTI_SUCCESS;
}

// Size query with a NULL image, then the image: the double's holds only its magic and context.
CUptiResult FakeMetrics::counter_availability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_GetCounterAvailability_Params)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  if (!initialized_) return CUPTI_ERROR_NOT_INITIALIZED;
  if (!p->ctx) return CUPTI_ERROR_INVALID_CONTEXT;
  ImageWriter out;
  out.bytes(kAvailabilityMagic, kMagicSize);
  out.u32(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p->ctx)));
  const std::vector<uint8_t>& image = out.result();
  if (p->pCounterAvailabilityImage) {
    if (p->counterAvailabilityImageSize < image.size()) return CUPTI_ERROR_INVALID_PARAMETER;
    std::memcpy(p->pCounterAvailabilityImage, image.data(), image.size());
  }
  p->counterAvailabilityImageSize = image.size();
  return CUPTI_SUCCESS;
}

// --- Host: objects, base metrics, configuration, evaluation ----------------------------------

// Only the range profiler is modelled (not PM sampling). pSinglePassMetricSetName, the last
// field, is not read, so a structSize ending at pHostObject is enough.
CUptiResult FakeMetrics::host_initialize(CUpti_Profiler_Host_Initialize_Params* p) {
  if (!valid(p, CUPTI_PROFILER_STRUCT_SIZE(CUpti_Profiler_Host_Initialize_Params, pHostObject))) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  if (p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER) return CUPTI_ERROR_NOT_SUPPORTED;
  if (p->pCounterAvailabilityImage) {
    ImageReader in(p->pCounterAvailabilityImage, kMagicSize);
    if (!in.magic(kAvailabilityMagic)) return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  const auto chip = chips_.find(p->pChipName ? p->pChipName : "");
  if (chip == chips_.end()) return CUPTI_ERROR_INVALID_CHIP_NAME;
  auto object = std::make_unique<HostObject>();
  object->chip = chip->first;
  object->base_metrics = chip->second;
  for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; ++type) {
    for (const std::string& name : object->base_metrics[type]) {
      object->base_metric_names[type].push_back(name.c_str());
    }
  }
  p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(object.get());
  hosts_.emplace(object.get(), std::move(object));
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::host_deinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Host_Deinitialize_Params)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  return hosts_.erase(p->pHostObject) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult FakeMetrics::base_metrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Host_GetBaseMetrics_Params)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  HostObject* object = host(p->pHostObject);
  if (!object || p->metricType < 0 || p->metricType >= CUPTI_METRIC_TYPE__COUNT) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  std::vector<const char*>& names = object->base_metric_names[p->metricType];
  p->ppMetricNames = names.data();
  p->numMetrics = names.size();
  return CUPTI_SUCCESS;
}

// All the metrics or none: one the chip lacks refuses the call.
CUptiResult FakeMetrics::add_metrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Host_ConfigAddMetrics_Params) ||
      (p->numMetrics > 0 && !p->ppMetricNames)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  HostObject* object = host(p->pHostObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    if (!p->ppMetricNames[i] || !chip_has(object->chip, p->ppMetricNames[i])) {
      return CUPTI_ERROR_INVALID_METRIC_NAME;
    }
  }
  auto& config = object->config_metrics;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    if (std::find(config.begin(), config.end(), p->ppMetricNames[i]) == config.end()) {
      config.emplace_back(p->ppMetricNames[i]);
    }
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::config_image_size(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Host_GetConfigImageSize_Params)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  HostObject* object = host(p->pHostObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  p->configImageSize =
      ConfigImage{object->config_metrics, passes_for(object->config_metrics.size())}.bytes().size();
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::config_image(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Host_GetConfigImage_Params) || !p->pConfigImage) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  HostObject* object = host(p->pHostObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  const std::vector<uint8_t> image =
      ConfigImage{object->config_metrics, passes_for(object->config_metrics.size())}.bytes();
  if (p->configImageSize < image.size()) return CUPTI_ERROR_INVALID_PARAMETER;
  std::memcpy(p->pConfigImage, image.data(), image.size());
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::passes(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Host_GetNumOfPasses_Params)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const auto image = ConfigImage::read(p->pConfigImage, p->configImageSize);
  if (!image) return CUPTI_ERROR_INVALID_PARAMETER;
  p->numOfPasses = image->passes;
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::evaluate(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_Profiler_Host_EvaluateToGpuValues_Params) ||
      (p->numMetrics > 0 && (!p->ppMetricNames || !p->pMetricValues))) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  HostObject* object = host(p->pHostObject);
  uint32_t ranges = 0;
  const auto layout = CounterDataLayout::read(p->pCounterDataImage, p->counterDataImageSize, &ranges);
  if (!object || !layout || p->rangeIndex >= ranges) return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const char* name = p->ppMetricNames[i];
    const auto& metrics = layout->metrics;
    const auto found = name ? std::find(metrics.begin(), metrics.end(), name) : metrics.end();
    if (found == metrics.end() || !chip_has(object->chip, name)) return CUPTI_ERROR_INVALID_METRIC_NAME;
    const auto metric = static_cast<size_t>(found - metrics.begin());
    const size_t offset = layout->value_offset(p->rangeIndex, metric);
    std::memcpy(&p->pMetricValues[i], p->pCounterDataImage + offset, sizeof(double));
  }
  return CUPTI_SUCCESS;
}

// --- Range profiler ----------------------------------------------------------------------------

// One range profiler per context (the double's reading: one profiling session per context).
// cacheControlMode (CUDA 13.4), the last field, is not read: a structSize ending at
// pRangeProfilerObject is enough.
CUptiResult FakeMetrics::enable(CUpti_RangeProfiler_Enable_Params* p) {
  if (!valid(p, CUPTI_PROFILER_STRUCT_SIZE(CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject)) ||
      !p->ctx) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  if (!initialized_) return CUPTI_ERROR_NOT_INITIALIZED;
  const auto context = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p->ctx));
  for (const auto& [handle, profiler] : range_profilers_) {
    if (profiler->context == context) return CUPTI_ERROR_INVALID_OPERATION;
  }
  auto object = std::make_unique<RangeProfilerObject>();
  object->context = context;
  p->pRangeProfilerObject = reinterpret_cast<CUpti_RangeProfiler_Object*>(object.get());
  range_profilers_.emplace(object.get(), std::move(object));
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::disable(CUpti_RangeProfiler_Disable_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_Disable_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock lock(mutex_);
  return range_profilers_.erase(p->pRangeProfilerObject) ? CUPTI_SUCCESS
                                                         : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult FakeMetrics::counter_data_size(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_GetCounterDataSize_Params) || !p->pMetricNames ||
      p->numMetrics == 0 || p->maxNumOfRanges == 0 || p->maxNumOfRanges > UINT32_MAX ||
      p->maxNumRangeTreeNodes < p->maxNumOfRanges) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  RangeProfilerObject* object = range_profiler(p->pRangeProfilerObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  CounterDataLayout layout;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    if (!p->pMetricNames[i]) return CUPTI_ERROR_INVALID_PARAMETER;
    layout.metrics.emplace_back(p->pMetricNames[i]);
  }
  layout.capacity = static_cast<uint32_t>(p->maxNumOfRanges);
  p->counterDataSize = layout.size();
  object->sized = std::move(layout);
  return CUPTI_SUCCESS;
}

// The image must have the size GetCounterDataSize gave; it is then empty.
CUptiResult FakeMetrics::counter_data_initialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_CounterDataImage_Initialize_Params) ||
      !p->pCounterData) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  RangeProfilerObject* object = range_profiler(p->pRangeProfilerObject);
  if (!object || !object->sized || p->counterDataSize != object->sized->size()) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const std::vector<uint8_t> header = object->sized->header();
  std::memset(p->pCounterData, 0, p->counterDataSize);
  std::memcpy(p->pCounterData, header.data(), header.size());
  return CUPTI_SUCCESS;
}

// Auto ranges only, with one nesting level as the header asks. The double replays kernels
// (kernel replay) for any number of passes; user replay only needs none, so it takes one pass.
CUptiResult FakeMetrics::set_config(CUpti_RangeProfiler_SetConfig_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_SetConfig_Params) || !p->pCounterDataImage ||
      p->maxRangesPerPass == 0) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const auto config = ConfigImage::read(p->pConfig, p->configSize);
  uint32_t ranges = 0;
  const auto layout = CounterDataLayout::read(p->pCounterDataImage, p->counterDataImageSize, &ranges);
  if (!config || !layout) return CUPTI_ERROR_INVALID_PARAMETER;
  for (const std::string& metric : config->metrics) {
    if (std::find(layout->metrics.begin(), layout->metrics.end(), metric) == layout->metrics.end()) {
      return CUPTI_ERROR_INVALID_PARAMETER;  // the image has no room for its values
    }
  }
  if (p->range != CUPTI_AutoRange) return CUPTI_ERROR_NOT_SUPPORTED;
  if (p->numNestingLevels != 1) return CUPTI_ERROR_INVALID_PARAMETER;
  const bool replays = p->replayMode == CUPTI_KernelReplay ||
                       (p->replayMode == CUPTI_UserReplay && config->passes == 1);
  if (!replays) return CUPTI_ERROR_NOT_SUPPORTED;
  Lock lock(mutex_);
  RangeProfilerObject* object = range_profiler(p->pRangeProfilerObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  if (object->started) return CUPTI_ERROR_INVALID_OPERATION;
  object->configured = true;
  object->config_metrics = config->metrics;
  object->counter_data = p->pCounterDataImage;
  object->layout = *layout;
  object->capacity = std::min<size_t>(layout->capacity, p->maxRangesPerPass);
  object->ranges = ranges;
  object->pending.clear();
  object->dropped = 0;
  last_range_ = p->range;
  last_replay_ = p->replayMode;
  last_max_ranges_per_pass_ = p->maxRangesPerPass;
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::start(CUpti_RangeProfiler_Start_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_Start_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock lock(mutex_);
  RangeProfilerObject* object = range_profiler(p->pRangeProfilerObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!object->configured || object->started) return CUPTI_ERROR_INVALID_OPERATION;
  object->started = true;
  return CUPTI_SUCCESS;
}

// Every pass ran inside each launch (kernel replay) or one was all there was.
CUptiResult FakeMetrics::stop(CUpti_RangeProfiler_Stop_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_Stop_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  Lock lock(mutex_);
  RangeProfilerObject* object = range_profiler(p->pRangeProfilerObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!object->started) return CUPTI_ERROR_INVALID_OPERATION;
  object->started = false;
  p->passIndex = 0;
  p->targetNestingLevel = 1;
  p->isAllPassSubmitted = 1;
  return CUPTI_SUCCESS;
}

// Writes the ranges measured since the last decode into the image SetConfig named.
CUptiResult FakeMetrics::decode(CUpti_RangeProfiler_DecodeData_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_DecodeData_Params)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Lock lock(mutex_);
  RangeProfilerObject* object = range_profiler(p->pRangeProfilerObject);
  if (!object) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!object->configured || object->started) return CUPTI_ERROR_INVALID_OPERATION;
  const CounterDataLayout& layout = object->layout;
  const size_t first = object->ranges - object->pending.size();
  for (size_t i = 0; i < object->pending.size(); ++i) {
    const std::vector<double>& values = object->pending[i];
    for (size_t m = 0; m < object->config_metrics.size(); ++m) {
      const auto slot =
          std::find(layout.metrics.begin(), layout.metrics.end(), object->config_metrics[m]);
      const auto metric = static_cast<size_t>(slot - layout.metrics.begin());
      const size_t offset = layout.value_offset(first + i, metric);
      std::memcpy(object->counter_data + offset, &values[m], sizeof(double));
    }
  }
  const auto held = static_cast<uint32_t>(object->ranges);
  std::memcpy(object->counter_data + CounterDataLayout::kRangesOffset, &held, sizeof(held));
  object->pending.clear();
  p->numOfRangeDropped = std::exchange(object->dropped, 0);
  return CUPTI_SUCCESS;
}

CUptiResult FakeMetrics::counter_data_info(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  if (!FAKE_CUPTI_VALID(p, CUpti_RangeProfiler_GetCounterDataInfo_Params)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  uint32_t ranges = 0;
  if (!CounterDataLayout::read(p->pCounterDataImage, p->counterDataImageSize, &ranges)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  p->numTotalRanges = ranges;
  return CUPTI_SUCCESS;
}

#undef FAKE_CUPTI_VALID

}  // namespace
}  // namespace fake_cupti

extern "C" {

// Each entry point hands its params to the FakeMetrics method of the same purpose.
#define FAKE_CUPTI_METRICS_ENTRY(function, Params, method)   \
  CUptiResult CUPTIAPI function(Params* pParams) {           \
    return cupti_entry(__func__, [&](FakeCupti&) {           \
      return fake_cupti::kernel_metrics().method(pParams);   \
    });                                                      \
  }

FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerInitialize, CUpti_Profiler_Initialize_Params, initialize)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerDeInitialize, CUpti_Profiler_DeInitialize_Params, deinitialize)
FAKE_CUPTI_METRICS_ENTRY(cuptiDeviceGetChipName, CUpti_Device_GetChipName_Params, chip_name)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerGetCounterAvailability,
                         CUpti_Profiler_GetCounterAvailability_Params, counter_availability)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostInitialize, CUpti_Profiler_Host_Initialize_Params,
                         host_initialize)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostDeinitialize, CUpti_Profiler_Host_Deinitialize_Params,
                         host_deinitialize)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostGetBaseMetrics, CUpti_Profiler_Host_GetBaseMetrics_Params,
                         base_metrics)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostConfigAddMetrics,
                         CUpti_Profiler_Host_ConfigAddMetrics_Params, add_metrics)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostGetConfigImageSize,
                         CUpti_Profiler_Host_GetConfigImageSize_Params, config_image_size)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostGetConfigImage, CUpti_Profiler_Host_GetConfigImage_Params,
                         config_image)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostGetNumOfPasses, CUpti_Profiler_Host_GetNumOfPasses_Params,
                         passes)
FAKE_CUPTI_METRICS_ENTRY(cuptiProfilerHostEvaluateToGpuValues,
                         CUpti_Profiler_Host_EvaluateToGpuValues_Params, evaluate)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerEnable, CUpti_RangeProfiler_Enable_Params, enable)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerDisable, CUpti_RangeProfiler_Disable_Params, disable)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerGetCounterDataSize,
                         CUpti_RangeProfiler_GetCounterDataSize_Params, counter_data_size)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerCounterDataImageInitialize,
                         CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
                         counter_data_initialize)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerSetConfig, CUpti_RangeProfiler_SetConfig_Params,
                         set_config)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerStart, CUpti_RangeProfiler_Start_Params, start)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerStop, CUpti_RangeProfiler_Stop_Params, stop)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerDecodeData, CUpti_RangeProfiler_DecodeData_Params, decode)
FAKE_CUPTI_METRICS_ENTRY(cuptiRangeProfilerGetCounterDataInfo,
                         CUpti_RangeProfiler_GetCounterDataInfo_Params, counter_data_info)
#undef FAKE_CUPTI_METRICS_ENTRY

void fake_cupti_set_device_chip(uint32_t device, const char* chip_name) {
  if (!chip_name) return;
  control_entry([&](FakeCupti&) { fake_cupti::kernel_metrics().set_device_chip(device, chip_name); });
}

void fake_cupti_add_chip_metric(const char* chip_name, int metric_type, const char* base_metric) {
  if (!chip_name || !base_metric) return;
  control_entry([&](FakeCupti&) {
    fake_cupti::kernel_metrics().add_chip_metric(chip_name, metric_type, base_metric);
  });
}

void fake_cupti_set_kernel_metric(const char* kernel_name, const char* metric, double value) {
  if (!kernel_name || !metric) return;
  control_entry([&](FakeCupti&) {
    fake_cupti::kernel_metrics().set_kernel_metric(kernel_name, metric, value);
  });
}

void fake_cupti_set_metrics_per_pass(size_t count) {
  control_entry([&](FakeCupti&) { fake_cupti::kernel_metrics().set_metrics_per_pass(count); });
}

void fake_cupti_last_range_config(int* range, int* replay, size_t* max_ranges_per_pass) {
  control_entry([&](FakeCupti&) {
    fake_cupti::kernel_metrics().last_config(range, replay, max_ranges_per_pass);
  });
}

void fake_cupti_profiler_objects(int* initialized, size_t* host_objects, size_t* range_profilers) {
  control_entry([&](FakeCupti&) {
    fake_cupti::kernel_metrics().objects(initialized, host_objects, range_profilers);
  });
}

}  // extern "C"
