#include "export/memory_lifetimes.h"

#include <map>

#include <fmt/format.h>

namespace perfprof {
namespace {

using memory::Allocation;

constexpr std::string_view kModulePrefix = "nn.Module: ";  // of module calls' names, left out of the tables

// For each allocator event, the innermost module range open on its thread at that moment.
std::vector<StringId> enclosing_modules(const TraceModel& model) {
  const auto& allocations = model.memory.events.allocations;
  std::vector<StringId> module(allocations.size(), kEmptyString);
  std::map<uint32_t, std::vector<size_t>> ranges_by_track;  // module ranges, in begin order
  const RangeTable& r = model.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::Module) ranges_by_track[r.track[i]].push_back(i);
  }
  std::map<uint32_t, std::vector<size_t>> allocations_by_track;  // in time order
  for (size_t i = 0; i < allocations.size(); ++i) allocations_by_track[model.memory.allocation_track[i]].push_back(i);
  for (const auto& [track, indexes] : allocations_by_track) {
    const std::vector<size_t>& ranges = ranges_by_track[track];
    std::vector<size_t> open;
    size_t next = 0;
    for (size_t a : indexes) {
      const int64_t time = allocations[a].time_ns;
      for (; next < ranges.size() && r.begin_ns[ranges[next]] <= time; ++next) {
        while (!open.empty() && r.end_ns[open.back()] < r.begin_ns[ranges[next]]) open.pop_back();
        open.push_back(ranges[next]);
      }
      while (!open.empty() && r.end_ns[open.back()] < time) open.pop_back();
      if (!open.empty()) module[a] = r.name[open.back()];
    }
  }
  return module;
}

// For each allocation, the index of the event that frees it in the window, or -1.
std::vector<int64_t> matching_frees(const std::vector<Allocation>& allocations) {
  std::vector<int64_t> freed_by(allocations.size(), -1);
  std::map<memory::Address, size_t> live;  // -> allocation
  for (size_t i = 0; i < allocations.size(); ++i) {
    const Allocation& a = allocations[i];
    const memory::Address where = memory::address_of(a.ptr, a.device);
    if (a.bytes > 0) {
      live[where] = i;
      continue;
    }
    const auto found = live.find(where);
    if (found == live.end()) continue;
    freed_by[found->second] = static_cast<int64_t>(i);
    live.erase(found);
  }
  return freed_by;
}

}  // namespace

std::vector<AllocationLifetime> allocation_lifetimes(const TraceModel& model, const memory::MemoryProfile& profile) {
  const auto& allocations = model.memory.events.allocations;
  const std::vector<StringId> modules = enclosing_modules(model);
  const std::vector<int64_t> freed_by = matching_frees(allocations);
  std::vector<AllocationLifetime> lifetimes;
  for (size_t i = 0; i < allocations.size(); ++i) {
    const Allocation& a = allocations[i];
    if (a.bytes <= 0) continue;
    AllocationLifetime& lifetime = lifetimes.emplace_back();
    lifetime.allocation = i;
    if (freed_by[i] >= 0) lifetime.release = static_cast<size_t>(freed_by[i]);
    const std::string_view module = model.str(modules[i]);
    lifetime.module = module.substr(std::min(module.size(), kModulePrefix.size()));
    lifetime.category = a.storage < 0 ? memory::Category::kUnknown
                                      : profile.categories.get(a.storage, 0).value_or(memory::Category::kUnknown);
  }
  return lifetimes;
}

std::string memory_device_name(memory::Device device) {
  return device.type == memory::DeviceType::kCpu ? "CPU" : fmt::format("CUDA:{}", device.index);
}

}  // namespace perfprof
