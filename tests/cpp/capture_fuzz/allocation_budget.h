#pragma once
// The fuzz test's view of the memory a case takes: this executable replaces operator new and
// delete to count the bytes they hand out (malloc_usable_size of each block), and refuses, with
// std::bad_alloc, a request that would take the live bytes past a budget. A reader that sizes a
// table from a corrupt count is then stopped at its first oversized request, counted, instead
// of taking the machine's memory. Memory C libraries allocate with malloc (SQLite, zlib) is not
// counted.
#include <cstdint>

namespace perfprof::fuzz {

struct AllocationStats {
  uint64_t live_bytes = 0;
  uint64_t peak_bytes = 0;        // live bytes at their highest since the budget was set
  uint64_t refused = 0;           // requests refused since the budget was set
  uint64_t largest_refused = 0;   // bytes of the largest of them
};

// While alive, refuses a request that would take the live bytes past `bytes` more than they are
// now. One at a time.
class AllocationBudget {
 public:
  explicit AllocationBudget(uint64_t bytes);
  ~AllocationBudget();
  AllocationBudget(const AllocationBudget&) = delete;
  AllocationBudget& operator=(const AllocationBudget&) = delete;

  // Since the budget was set: the peak above the live bytes then, and the refusals.
  AllocationStats stats() const;

 private:
  uint64_t live_at_start_;
};

}  // namespace perfprof::fuzz
