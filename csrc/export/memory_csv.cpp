#include "export/memory_csv.h"

#include <iterator>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "export/csv.h"
#include "export/memory_lifetimes.h"
#include "export/output_file.h"

namespace perfprof {
namespace {

using memory::Allocation;

// The sizes are in binary units and labelled so (KiB = 2^10 bytes, MiB = 2^20). torch_npu's files
// of these names hold the same numbers labelled KB and MB, which read as 10^3 and 10^6.
constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;

}  // namespace

void write_memory_record_csv(const TraceModel& model, const std::string& path) {
  OutputFile file(path);
  std::string text = "Component,Timestamp(us),Total Allocated(MiB),Total Reserved(MiB),Device Type\n";
  for (const Allocation& a : model.memory.events.allocations) {
    text += "PyTorch,";
    append_us(text, a.time_ns + model.unix_offset_ns);
    fmt::format_to(std::back_inserter(text), ",{:.6f},{:.6f},{}\n", a.total_allocated / kMiB, a.total_reserved / kMiB,
                   memory_device_name(a.device));
    file.write_if_large(text);
  }
  file.write(text);
  file.commit();
}

void write_operator_memory_csv(const TraceModel& model, const memory::MemoryProfile& profile, const std::string& path) {
  const auto& allocations = model.memory.events.allocations;
  OutputFile file(path);
  std::string text =
      "Name,Module,Category,Size(KiB),Allocation Time(us),Release Time(us),Duration(us),"
      "Allocation Total Allocated(MiB),Allocation Total Reserved(MiB),Release Total Allocated(MiB),"
      "Release Total Reserved(MiB),Device Type\n";
  for (const AllocationLifetime& lifetime : allocation_lifetimes(model, profile)) {
    const Allocation& a = allocations[lifetime.allocation];
    text += csv_field(model.str(a.op));
    text += ',';
    text += csv_field(lifetime.module);
    fmt::format_to(std::back_inserter(text), ",{},{:.3f},", memory::category_name(lifetime.category), a.bytes / kKiB);
    append_us(text, a.time_ns + model.unix_offset_ns);
    if (lifetime.release) {
      const Allocation& f = allocations[*lifetime.release];
      text += ',';
      append_us(text, f.time_ns + model.unix_offset_ns);
      text += ',';
      append_us(text, f.time_ns - a.time_ns);
      fmt::format_to(std::back_inserter(text), ",{:.6f},{:.6f},{:.6f},{:.6f},", a.total_allocated / kMiB,
                     a.total_reserved / kMiB, f.total_allocated / kMiB, f.total_reserved / kMiB);
    } else {
      fmt::format_to(std::back_inserter(text), ",,,{:.6f},{:.6f},,,", a.total_allocated / kMiB, a.total_reserved / kMiB);
    }
    text += memory_device_name(a.device);
    text += '\n';
    file.write_if_large(text);
  }
  file.write(text);
  file.commit();
}

}  // namespace perfprof
