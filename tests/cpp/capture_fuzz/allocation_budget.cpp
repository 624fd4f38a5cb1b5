#include "capture_fuzz/allocation_budget.h"

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace perfprof::fuzz {
namespace {

constexpr uint64_t kNoLimit = UINT64_MAX;

std::atomic<uint64_t> g_live{0};
std::atomic<uint64_t> g_peak{0};
std::atomic<uint64_t> g_limit{kNoLimit};  // live bytes a request may not take the total past
std::atomic<uint64_t> g_refused{0};
std::atomic<uint64_t> g_largest_refused{0};

void raise_to(std::atomic<uint64_t>& value, uint64_t candidate) {
  uint64_t seen = value.load(std::memory_order_relaxed);
  while (candidate > seen && !value.compare_exchange_weak(seen, candidate, std::memory_order_relaxed)) {
  }
}

// Whether `size` more bytes keep the live bytes within the limit; a refusal is counted.
bool within_budget(size_t size) {
  const uint64_t limit = g_limit.load(std::memory_order_relaxed);
  if (limit == kNoLimit || g_live.load(std::memory_order_relaxed) + size <= limit) return true;
  g_refused.fetch_add(1, std::memory_order_relaxed);
  raise_to(g_largest_refused, size);
  return false;
}

void* counted(void* block) {
  if (block == nullptr) return nullptr;
  const uint64_t live = g_live.fetch_add(malloc_usable_size(block), std::memory_order_relaxed) + malloc_usable_size(block);
  raise_to(g_peak, live);
  return block;
}

void* allocate(size_t size, size_t alignment) {
  if (!within_budget(size)) return nullptr;
  if (alignment <= alignof(std::max_align_t)) return counted(std::malloc(size == 0 ? 1 : size));
  return counted(std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment));
}

void* allocate_or_throw(size_t size, size_t alignment) {
  void* block = allocate(size, alignment);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}

void release(void* block) noexcept {
  if (block == nullptr) return;
  g_live.fetch_sub(malloc_usable_size(block), std::memory_order_relaxed);
  std::free(block);
}

}  // namespace

AllocationBudget::AllocationBudget(uint64_t bytes) : live_at_start_(g_live.load(std::memory_order_relaxed)) {
  g_peak.store(live_at_start_, std::memory_order_relaxed);
  g_refused.store(0, std::memory_order_relaxed);
  g_largest_refused.store(0, std::memory_order_relaxed);
  g_limit.store(live_at_start_ + bytes, std::memory_order_relaxed);
}

AllocationBudget::~AllocationBudget() { g_limit.store(kNoLimit, std::memory_order_relaxed); }

AllocationStats AllocationBudget::stats() const {
  const uint64_t live = g_live.load(std::memory_order_relaxed);
  const uint64_t peak = g_peak.load(std::memory_order_relaxed);
  return {live, peak > live_at_start_ ? peak - live_at_start_ : 0, g_refused.load(std::memory_order_relaxed),
          g_largest_refused.load(std::memory_order_relaxed)};
}

}  // namespace perfprof::fuzz

// The replacements (every form the standard lets a program replace).
void* operator new(size_t size) { return perfprof::fuzz::allocate_or_throw(size, alignof(std::max_align_t)); }
void* operator new[](size_t size) { return perfprof::fuzz::allocate_or_throw(size, alignof(std::max_align_t)); }
void* operator new(size_t size, std::align_val_t alignment) {
  return perfprof::fuzz::allocate_or_throw(size, static_cast<size_t>(alignment));
}
void* operator new[](size_t size, std::align_val_t alignment) {
  return perfprof::fuzz::allocate_or_throw(size, static_cast<size_t>(alignment));
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return perfprof::fuzz::allocate(size, alignof(std::max_align_t));
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return perfprof::fuzz::allocate(size, alignof(std::max_align_t));
}
void operator delete(void* block) noexcept { perfprof::fuzz::release(block); }
void operator delete[](void* block) noexcept { perfprof::fuzz::release(block); }
void operator delete(void* block, size_t) noexcept { perfprof::fuzz::release(block); }
void operator delete[](void* block, size_t) noexcept { perfprof::fuzz::release(block); }
void operator delete(void* block, std::align_val_t) noexcept { perfprof::fuzz::release(block); }
void operator delete[](void* block, std::align_val_t) noexcept { perfprof::fuzz::release(block); }
void operator delete(void* block, size_t, std::align_val_t) noexcept { perfprof::fuzz::release(block); }
void operator delete[](void* block, size_t, std::align_val_t) noexcept { perfprof::fuzz::release(block); }
