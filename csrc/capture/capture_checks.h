#pragma once
// The checks a capture's decoded records pass before the capture holds them: every id and index
// read from the bytes names something that is there, every enum is one of its values. The stages
// after the reader (trace builder, memory categorizer, exporters) index with these values without
// checking them again, so a corrupt or hostile file must be stopped here. Each check throws
// CaptureFormatError saying what is wrong; the reader adds the file, the chunk and its offset.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "capture/capture_error.h"
#include "memory/memory_events.h"

namespace perfprof::capture_checks {

// Interned tables are indexed by id: a capture's ids are the profiled process's, so they can be
// sparse, and a table is as long as its largest id. Ids at these ceilings are refused, so a
// corrupt id cannot make the reader allocate gigabytes (a table at its ceiling takes 64 MiB of
// strings or 24 MiB of argument sets); a process that interned 2 million distinct strings or
// a million distinct argument sets is far past anything perfprof records.
inline constexpr uint32_t kStringIdCeiling = uint32_t{1} << 21;
inline constexpr uint32_t kArgSetIdCeiling = uint32_t{1} << 20;

// Times (ns: 73 years either side of the clock's origin), byte counts (2 EiB) and tensor ids lie
// within this of zero, so that the differences and sums the analyses take of a few of them
// cannot overflow.
inline constexpr int64_t kMagnitudeLimit = int64_t{1} << 61;

// The interned entries the chunks read so far gave: a record may use an id below their tables'
// sizes (an id a table has no entry for reads as the empty one); id 0, the empty entry, is always
// known.
struct KnownIds {
  const std::vector<std::string>& strings;
  size_t arg_sets = 1;
};

// An id a Strings or ArgSets chunk gives an entry: not 0 (the empty entry), below `ceiling`.
void check_entry_id(uint32_t id, uint32_t ceiling, const char* what);

// A record that refers to nothing and holds no enum is always whole.
template <typename T>
void check(const T&, const KnownIds&) {}
void check(const ArgSet& set, const KnownIds& known);
void check(const RawEvent& event, const KnownIds& known);
void check(const CompletedRange& range, const KnownIds& known);
void check(const GpuActivity& activity, const KnownIds& known);
void check(const ApiCall& call, const KnownIds& known);
void check(const memory::MemoryEvents& events, const KnownIds& known);
void check(const memory::ObservedTensor& tensor, const KnownIds& known);
void check(const RunMetadata& entry, const KnownIds& known);
void check(const ProcessInfo& process, const KnownIds& known);
void check(const CollectionWindow& window, const KnownIds& known);
void check(const KernelMetricsInput& metrics, const KnownIds& known);

template <typename T>
void check_each(const std::vector<T>& records, const KnownIds& known) {
  for (const T& record : records) check(record, known);
}

}  // namespace perfprof::capture_checks
