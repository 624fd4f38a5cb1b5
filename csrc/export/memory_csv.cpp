#include "export/memory_csv.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "export/csv.h"
#include "export/output_file.h"

namespace perfprof {
namespace {

using memory::Allocation;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::string_view kModulePrefix = "nn.Module: ";

std::string device_column(memory::Device device) {
  return device.type == memory::DeviceType::kCpu ? "CPU" : fmt::format("CUDA:{}", device.index);
}

// For each allocator event, the innermost module range open on its thread at that moment.
std::vector<StringId> enclosing_modules(const TraceModel& model) {
  const auto& allocations = model.memory.events.allocations;
  std::vector<StringId> module(allocations.size(), kEmptyString);
  std::map<uint32_t, std::vector<size_t>> ranges_by_track;  // module ranges, in begin order
  const RangeTable& r = model.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::string_view(model.str(r.name[i])).substr(0, kModulePrefix.size()) == kModulePrefix) {
      ranges_by_track[r.track[i]].push_back(i);
    }
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

void write_memory_record_csv(const TraceModel& model, const std::string& path) {
  OutputFile file(path);
  std::string text = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Device Type\n";
  for (const Allocation& a : model.memory.events.allocations) {
    text += "PyTorch,";
    append_us(text, a.time_ns + model.unix_offset_ns);
    fmt::format_to(std::back_inserter(text), ",{:.6f},{:.6f},{}\n", a.total_allocated / kMiB, a.total_reserved / kMiB,
                   device_column(a.device));
    file.write_if_large(text);
  }
  file.write(text);
  file.commit();
}

void write_operator_memory_csv(const TraceModel& model, const memory::MemoryProfile& profile, const std::string& path) {
  const auto& allocations = model.memory.events.allocations;
  const std::vector<StringId> modules = enclosing_modules(model);
  const std::vector<int64_t> freed_by = matching_frees(allocations);
  OutputFile file(path);
  std::string text =
      "Name,Module,Category,Size(KB),Allocation Time(us),Release Time(us),Duration(us),"
      "Allocation Total Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),"
      "Release Total Reserved(MB),Device Type\n";
  for (size_t i = 0; i < allocations.size(); ++i) {
    const Allocation& a = allocations[i];
    if (a.bytes <= 0) continue;
    const memory::Category category =
        a.storage < 0 ? memory::Category::kUnknown
                      : profile.categories.get(a.storage, 0).value_or(memory::Category::kUnknown);
    text += csv_field(model.str(a.op));
    text += ',';
    text += csv_field(model.str(modules[i]).substr(std::min(model.str(modules[i]).size(), kModulePrefix.size())));
    fmt::format_to(std::back_inserter(text), ",{},{:.3f},", memory::category_name(category), a.bytes / 1024.0);
    append_us(text, a.time_ns + model.unix_offset_ns);
    if (freed_by[i] >= 0) {
      const Allocation& f = allocations[freed_by[i]];
      text += ',';
      append_us(text, f.time_ns + model.unix_offset_ns);
      text += ',';
      append_us(text, f.time_ns - a.time_ns);
      fmt::format_to(std::back_inserter(text), ",{:.6f},{:.6f},{:.6f},{:.6f},", a.total_allocated / kMiB,
                     a.total_reserved / kMiB, f.total_allocated / kMiB, f.total_reserved / kMiB);
    } else {
      fmt::format_to(std::back_inserter(text), ",,,{:.6f},{:.6f},,,", a.total_allocated / kMiB, a.total_reserved / kMiB);
    }
    text += device_column(a.device);
    text += '\n';
    file.write_if_large(text);
  }
  file.write(text);
  file.commit();
}

}  // namespace perfprof
