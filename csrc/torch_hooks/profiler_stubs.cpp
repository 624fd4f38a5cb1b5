#include "torch_hooks/profiler_stubs.h"

#include <dlfcn.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "record/recorder.h"
#include "torch_hooks/operator_ranges.h"

namespace perfprof {
namespace torch_abi {

// Mirror of torch::profiler::impl::ProfilerStubs (torch/csrc/profiler/stubs/base.h): the same
// virtual functions in the same order, so the vtable layouts agree. The class has not changed
// since torch 1.13 (checked up to 2.13). A torch that reorders it would call the wrong methods:
// tests/python/test_host_capture.py compares the captured operators with torch.profiler's.
using ProfilerVoidEventStub = std::shared_ptr<void>;
using DeviceIndex = int8_t;

struct ProfilerStubs {
  virtual void record(DeviceIndex* device, ProfilerVoidEventStub* event, int64_t* cpu_ns) const = 0;
  virtual float elapsed(const ProfilerVoidEventStub* event, const ProfilerVoidEventStub* event2) const = 0;
  virtual void mark(const char* name) const = 0;
  virtual void rangePush(const char* name) const = 0;
  virtual void rangePop() const = 0;
  virtual bool enabled() const { return false; }
  virtual void onEachDevice(std::function<void(int)> op) const = 0;
  virtual void synchronize() const = 0;
  virtual ~ProfilerStubs() = default;
};

using RegisterStubs = void (*)(ProfilerStubs*);
using GetStubs = const ProfilerStubs* (*)();

}  // namespace torch_abi

namespace {

// Per thread, for each open range: whether it went to perfprof (with its range id) or to the
// replaced stubs.
enum class RangeOwner : uint8_t { Perfprof, Replaced, Nobody };

struct OpenRange {
  RangeOwner owner;
  uint64_t id;  // perfprof's range id, 0 when not recorded
};

std::vector<OpenRange>& open_ranges() {
  thread_local std::vector<OpenRange> ranges;
  return ranges;
}

// perfprof's stubs: operator ranges go to the recorder while operators are recorded; everything
// else, and ranges outside recording, goes to the stubs they replaced.
class OperatorStubs final : public torch_abi::ProfilerStubs {
 public:
  explicit OperatorStubs(const ProfilerStubs* replaced) : replaced_(replaced) {}

  void record(torch_abi::DeviceIndex* device, torch_abi::ProfilerVoidEventStub* event, int64_t* cpu_ns) const override {
    if (replaced_) replaced_->record(device, event, cpu_ns);
  }
  float elapsed(const torch_abi::ProfilerVoidEventStub* a, const torch_abi::ProfilerVoidEventStub* b) const override {
    return replaced_ ? replaced_->elapsed(a, b) : 0.0f;
  }
  void mark(const char* name) const override {
    if (forwards()) call_replaced([&] { replaced_->mark(name); });
  }
  void rangePush(const char* name) const override {
    if (Recorder::instance().enabled(kChannelOperators)) {
      open_ranges().push_back({RangeOwner::Perfprof, begin_operator(name)});
    } else if (forwards()) {
      open_ranges().push_back({RangeOwner::Replaced, 0});
      call_replaced([&] { replaced_->rangePush(name); });
    } else {
      open_ranges().push_back({RangeOwner::Nobody, 0});
    }
  }
  void rangePop() const override {
    std::vector<OpenRange>& ranges = open_ranges();
    if (ranges.empty()) return;  // pushed before these stubs were installed
    const OpenRange range = ranges.back();
    ranges.pop_back();
    if (range.owner == RangeOwner::Perfprof) {
      end_operator(range.id);
    } else if (range.owner == RangeOwner::Replaced) {
      call_replaced([&] { replaced_->rangePop(); });
    }
  }
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override {
    if (replaced_) replaced_->onEachDevice(std::move(op));
  }
  void synchronize() const override {
    if (replaced_) replaced_->synchronize();
  }

 private:
  // The default stubs of a build without the backend fail on every call; never forward to them.
  bool forwards() const { return replaced_ != nullptr && replaced_->enabled(); }

  template <typename Call>
  static void call_replaced(Call&& call) noexcept {
    try {
      call();
    } catch (...) {
      // A failing foreign tool must not fail the operator being run.
    }
  }

  const ProfilerStubs* replaced_;
};

struct Installed {
  std::unique_ptr<OperatorStubs> itt;
  std::unique_ptr<OperatorStubs> nvtx;
};

std::string install_pair(void* torch, const char* register_symbol, const char* get_symbol,
                         std::unique_ptr<OperatorStubs>& slot) {
  auto register_stubs = reinterpret_cast<torch_abi::RegisterStubs>(dlsym(torch, register_symbol));
  auto get_stubs = reinterpret_cast<torch_abi::GetStubs>(dlsym(torch, get_symbol));
  if (!register_stubs || !get_stubs) return fmt::format("libtorch does not export {}", register_symbol);
  slot = std::make_unique<OperatorStubs>(get_stubs());
  register_stubs(slot.get());
  return {};
}

}  // namespace

std::string install_torch_profiler_stubs(const std::string& libtorch_cpu_path) {
  static std::mutex mutex;
  static Installed& installed = *new Installed();  // never destroyed: torch may call the stubs at exit
  std::lock_guard<std::mutex> lock(mutex);
  if (installed.itt && installed.nvtx) return {};
  void* torch = dlopen(libtorch_cpu_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!torch) return fmt::format("{} is not loaded", libtorch_cpu_path);
  std::string error;
  if (!installed.itt) {
    error = install_pair(torch, "_ZN5torch8profiler4impl18registerITTMethodsEPNS1_13ProfilerStubsE",
                         "_ZN5torch8profiler4impl8ittStubsEv", installed.itt);
  }
  if (error.empty() && !installed.nvtx) {
    error = install_pair(torch, "_ZN5torch8profiler4impl19registerCUDAMethodsEPNS1_13ProfilerStubsE",
                         "_ZN5torch8profiler4impl9cudaStubsEv", installed.nvtx);
  }
  dlclose(torch);  // drops only the reference taken above; torch stays loaded
  return error;
}

}  // namespace perfprof
