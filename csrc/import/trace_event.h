#pragma once
// One item of a Chrome trace's "traceEvents", as read, and what its category and args are in the
// model's terms (as torch.profiler's Kineto and perfprof's chrome_trace.cpp write them).
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "import/json_reader.h"
#include "record/gpu_records.h"
#include "record/range_kind.h"

namespace perfprof {

// What is wrong with one event (a field missing, of the wrong type or out of range); the
// importer adds the file and the event's index.
class BadEvent : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The fields every Chrome trace event may have. Reused from event to event (its strings keep
// their room).
struct TraceEvent {
  std::string ph, cat, name, id;
  int64_t pid = 0, tid = 0;
  bool pid_numeric = false, tid_numeric = false, has_tid = false;  // Kineto names some tracks
  bool has_ts = false, has_dur = false;
  int64_t ts_ns = 0, dur_ns = 0;
  JsonValue args;  // Object, or Null when the event has none

  void clear();

  // The arg `key`, which must be a non-negative integer fitting `T` when present; `absent` when
  // not. Throws BadEvent.
  template <typename T>
  T unsigned_arg(const char* key, T absent = 0) const {
    const JsonValue* member = args.member(key);
    if (member == nullptr || member->type == JsonValue::Type::Null) return absent;
    uint64_t value = 0;
    if (member->type != JsonValue::Type::Number || !json_uint(member->text, value)) {
      throw BadEvent(fmt::format("its \"{}\" is not a non-negative integer", key));
    }
    if (value > static_cast<uint64_t>(std::numeric_limits<T>::max())) throw BadEvent(fmt::format("its \"{}\" ({}) is out of range", key, value));
    return static_cast<T>(value);
  }
  // The arg `key`, which must be an integer. Throws BadEvent.
  int64_t int_arg(const char* key) const;
  // The arg `key`, an integer >= `least` when present; `absent` when not. Throws BadEvent.
  int64_t optional_int(const char* key, int64_t absent, int64_t least) const;
  // The arg `key` as [x, y, z] counts into `out` when present. Throws BadEvent.
  void dim3_arg(const char* key, uint32_t (&out)[3]) const;
};

// CUPTI's copy kind by the code in a memcpy's name ("Memcpy HtoD (Pageable -> Device)"), as
// cupti/activity_decoder names them; 0 for none.
uint8_t copy_kind_of(std::string_view name);

// The GPU activity kind of a Chrome trace category; false for a category of none.
bool gpu_kind_of(std::string_view cat, GpuActivityKind& kind);

// The host range kind of a Chrome trace category (the inverse of category_name), told apart by
// name and args where one category holds several kinds; false for a category of none.
bool range_kind_of(const TraceEvent& event, RangeKind& kind);

}  // namespace perfprof
