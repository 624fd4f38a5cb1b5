// Memory profiling's tables as torch_npu's database names them, with the columns of
// memory_record.csv and operator_memory.csv in exact units (bytes, Unix ns) instead of MB and us,
// and perfprof's MEMORY_CATEGORIES (the memory timeline: bytes per category over time).
#include <array>

#include "export/database/table.h"
#include "export/database/tables.h"
#include "export/memory_lifetimes.h"
#include "memory/timeline.h"

namespace perfprof::db {
namespace {

using memory::Allocation;

struct RecordRow {
  const Context& c;
  const Allocation& a;
  StringId component, device;
};

const Table<RecordRow> kMemoryRecord{
    "MEMORY_RECORD",
    {
        {"component", SqlType::Integer, [](const RecordRow& r) { return SqlValue(r.component); }},
        {"timestamp", SqlType::Integer, [](const RecordRow& r) { return SqlValue(r.c.time(r.a.time_ns)); }},
        {"totalAllocated", SqlType::Integer, [](const RecordRow& r) { return SqlValue(r.a.total_allocated); }},
        {"totalReserved", SqlType::Integer, [](const RecordRow& r) { return SqlValue(r.a.total_reserved); }},
        {"deviceType", SqlType::Integer, [](const RecordRow& r) { return SqlValue(r.device); }},
    }};

struct OpMemoryRow {
  const Context& c;
  const Allocation& a;
  const Allocation* release;  // null: not freed in the window
  StringId module, category, device;
};

template <typename Field>
SqlValue released(const OpMemoryRow& r, Field field) {
  return r.release ? SqlValue(field(*r.release)) : SqlValue();
}

const Table<OpMemoryRow> kOpMemory{
    "OP_MEMORY",
    {
        {"name", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.a.op); }},
        {"module", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.module); }},
        {"category", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.category); }},
        {"size", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.a.bytes); }},
        {"allocationTime", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.c.time(r.a.time_ns)); }},
        {"releaseTime", SqlType::Integer,
         [](const OpMemoryRow& r) { return released(r, [&](const Allocation& f) { return r.c.time(f.time_ns); }); }},
        {"duration", SqlType::Integer,
         [](const OpMemoryRow& r) { return released(r, [&](const Allocation& f) { return f.time_ns - r.a.time_ns; }); }},
        {"allocationTotalAllocated", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.a.total_allocated); }},
        {"allocationTotalReserved", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.a.total_reserved); }},
        {"releaseTotalAllocated", SqlType::Integer,
         [](const OpMemoryRow& r) { return released(r, [](const Allocation& f) { return f.total_allocated; }); }},
        {"releaseTotalReserved", SqlType::Integer,
         [](const OpMemoryRow& r) { return released(r, [](const Allocation& f) { return f.total_reserved; }); }},
        {"deviceType", SqlType::Integer, [](const OpMemoryRow& r) { return SqlValue(r.device); }},
    }};

// One point of a device's memory timeline, for one category.
struct CategoryBytesRow {
  int64_t time_ns;
  StringId device;
  StringId category;
  int64_t bytes;
};

const Table<CategoryBytesRow> kMemoryCategories{
    "MEMORY_CATEGORIES",
    {
        {"timestamp", SqlType::Integer, [](const CategoryBytesRow& r) { return SqlValue(r.time_ns); }},
        {"deviceType", SqlType::Integer, [](const CategoryBytesRow& r) { return SqlValue(r.device); }},
        {"category", SqlType::Integer, [](const CategoryBytesRow& r) { return SqlValue(r.category); }},
        {"bytes", SqlType::Integer, [](const CategoryBytesRow& r) { return SqlValue(r.bytes); }},
    }};

// MEMORY_CATEGORIES: each device's memory timeline (the memory timeline exports' data), a row per
// point and category.
void write_memory_categories(Context& c) {
  TableWriter<CategoryBytesRow> rows(c.db, kMemoryCategories);
  for (const memory::Device device : memory::devices_with_memory(c.model.memory.events)) {
    const memory::MemoryTimeline timeline = c.trace.memory_timeline(device);
    const StringId device_name = c.strings.id(memory_device_name(device));
    std::array<StringId, memory::kNumCategories> categories{};
    for (size_t k = 0; k < categories.size(); ++k) {
      categories[k] = c.strings.id(memory::category_name(static_cast<memory::Category>(k)));
    }
    for (size_t point = 0; point < timeline.times_us.size(); ++point) {
      for (size_t k = 0; k < categories.size(); ++k) {
        rows.insert({timeline.times_us[point] * 1000, device_name, categories[k], timeline.bytes[point][k]});
      }
    }
  }
}

}  // namespace

void write_memory_tables(Context& c) {
  const auto& allocations = c.model.memory.events.allocations;
  TableWriter<RecordRow> records(c.db, kMemoryRecord);
  TableWriter<OpMemoryRow> operators(c.db, kOpMemory);
  write_memory_categories(c);
  if (allocations.empty()) return;  // no memory profile to compute
  const StringId component = c.strings.id("PyTorch");
  for (const Allocation& a : allocations) records.insert({c, a, component, c.strings.id(memory_device_name(a.device))});
  for (const AllocationLifetime& lifetime : allocation_lifetimes(c.model, c.trace.memory_profile())) {
    const Allocation& a = allocations[lifetime.allocation];
    operators.insert({c, a, lifetime.release ? &allocations[*lifetime.release] : nullptr, c.strings.id(lifetime.module),
                      c.strings.id(memory::category_name(lifetime.category)), c.strings.id(memory_device_name(a.device))});
  }
}

}  // namespace perfprof::db
