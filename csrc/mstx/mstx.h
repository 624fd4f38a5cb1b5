#pragma once
// mstx markers: recorded by perfprof (when the mstx channel is on and the domain passes the
// include/exclude filter) and always emitted as NVTX3 marks and ranges in an NVTX domain of the
// same name, so Nsight Systems shows them with or without perfprof collecting.
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/args.h"
#include "common/string_table.h"

namespace perfprof {

struct MstxDomain {
  MstxDomain(std::string name, StringId name_id, void* nvtx_domain)
      : name(std::move(name)), args(global_arg_sets().intern({{{ArgKey::Domain, name_id}}})), nvtx_domain(nvtx_domain) {}

  const std::string name;
  const ArgSetId args;      // {domain: name}, the event args of its markers
  void* const nvtx_domain;  // nvtxDomainHandle_t
  std::atomic<bool> recorded{true};
};

class Mstx {
 public:
  static Mstx& instance();

  // The domain called `name`, created on first use. The reference stays valid for the process.
  MstxDomain& domain(std::string_view name);

  // Which domains are recorded: only `include` when it is non-empty, else all but `exclude`.
  void filter_domains(std::vector<std::string> include, std::vector<std::string> exclude);

  // `message` must be NUL-terminated (it is handed to NVTX as a C string); `message_id` is its
  // interned id. `args` is the event args to record, normally domain.args.
  void mark(MstxDomain& domain, StringId message_id, const char* message, ArgSetId args) noexcept;
  uint64_t range_start(MstxDomain& domain, StringId message_id, const char* message,
                       ArgSetId args) noexcept;
  void range_end(uint64_t range_id) noexcept;

  // Event args naming the domain and the stream the marker was given for.
  ArgSetId args_with_stream(const MstxDomain& domain, uint64_t stream);

 private:
  Mstx() = default;
  bool passes_filter(const std::string& name) const;  // requires mutex_
  static bool recording(const MstxDomain& domain) noexcept;

  std::mutex mutex_;
  std::deque<MstxDomain> domains_;
  std::unordered_map<std::string, MstxDomain*> by_name_;
  std::vector<std::string> include_, exclude_;

  // NVTX range ids by perfprof range id, only while an NVTX tool (Nsight) is attached.
  std::atomic<bool> nvtx_tool_attached_{false};
  std::mutex nvtx_ranges_mutex_;
  std::unordered_map<uint64_t, std::pair<void*, uint64_t>> nvtx_ranges_;
};

}  // namespace perfprof
