#include "mstx/mstx.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>

#include "record/recorder.h"

namespace perfprof {
namespace {

nvtxEventAttributes_t nvtx_message(const char* message) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = message;
  return attributes;
}

// Set in the ids of ranges whose begin was recorded: their end is recorded too, whatever domain
// range_end is given, and the ends of filtered-out ranges are not recorded at all.
constexpr uint64_t kBeginRecorded = Recorder::kRangeIdFreeBit;

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Mstx& Mstx::instance() {
  static Mstx* mstx = new Mstx();  // never destroyed: markers may come from exiting threads
  return *mstx;
}

MstxDomain& Mstx::domain(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) return *it->second;
  std::string owned(name);
  nvtxDomainHandle_t nvtx_domain = nvtxDomainCreateA(owned.c_str());
  MstxDomain& created = domains_.emplace_back(owned, global_strings().intern(owned), nvtx_domain);
  created.recorded.store(passes_filter(created.name), std::memory_order_relaxed);
  by_name_.emplace(std::move(owned), &created);
  return created;
}

void Mstx::filter_domains(std::vector<std::string> include, std::vector<std::string> exclude) {
  std::lock_guard<std::mutex> lock(mutex_);
  include_ = std::move(include);
  exclude_ = std::move(exclude);
  for (MstxDomain& domain : domains_) {
    domain.recorded.store(passes_filter(domain.name), std::memory_order_relaxed);
  }
}

bool Mstx::passes_filter(const std::string& name) const {
  return include_.empty() ? !contains(exclude_, name) : contains(include_, name);
}

bool Mstx::recording(const MstxDomain& domain) noexcept {
  return Recorder::instance().enabled(kChannelMstx) &&
         domain.recorded.load(std::memory_order_relaxed);
}

void Mstx::mark(MstxDomain& domain, StringId message_id, const char* message,
                ArgSetId args) noexcept {
  const nvtxEventAttributes_t attributes = nvtx_message(message);
  nvtxDomainMarkEx(static_cast<nvtxDomainHandle_t>(domain.nvtx_domain), &attributes);
  if (recording(domain)) Recorder::instance().instant(message_id, RangeKind::Mstx, args);
}

uint64_t Mstx::range_start(MstxDomain& domain, StringId message_id, const char* message,
                           ArgSetId args) noexcept {
  const bool recorded = recording(domain);
  const uint64_t id = Recorder::next_range_id() | (recorded ? kBeginRecorded : 0);
  const nvtxEventAttributes_t attributes = nvtx_message(message);
  const nvtxRangeId_t nvtx_id =
      nvtxDomainRangeStartEx(static_cast<nvtxDomainHandle_t>(domain.nvtx_domain), &attributes);
  if (nvtx_id != 0) {  // a tool is attached: remember its id for the matching end
    nvtx_tool_attached_.store(true, std::memory_order_relaxed);
    try {
      std::lock_guard<std::mutex> lock(nvtx_ranges_mutex_);
      nvtx_ranges_[id] = {domain.nvtx_domain, nvtx_id};
    } catch (...) {
      // out of memory: the NVTX range stays open in the tool; perfprof's own record is intact
    }
  }
  if (recorded) Recorder::instance().begin_range(id, message_id, RangeKind::Mstx, args);
  return id;
}

void Mstx::range_end(uint64_t range_id) noexcept {
  if (nvtx_tool_attached_.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(nvtx_ranges_mutex_);
    if (auto it = nvtx_ranges_.find(range_id); it != nvtx_ranges_.end()) {
      nvtxDomainRangeEnd(static_cast<nvtxDomainHandle_t>(it->second.first), it->second.second);
      nvtx_ranges_.erase(it);
    }
  }
  if ((range_id & kBeginRecorded) && Recorder::instance().enabled(kChannelMstx)) {
    Recorder::instance().end_range(range_id);
  }
}

// A stream is a pointer: it fits in an int64.
ArgSetId Mstx::args_with_stream(const MstxDomain& domain, uint64_t stream) {
  ArgSet args;
  args.args.push_back({ArgKey::Domain, global_strings().intern(domain.name)});
  args.args.push_back({ArgKey::Stream, static_cast<int64_t>(stream)});
  return global_arg_sets().intern(args);
}

}  // namespace perfprof
