#pragma once
// data_preprocess: the time each schedule step spent fetching its data from a DataLoader, as
// torch records it: a user annotation "enumerate(DataLoader)#<iterator>.__next__" around each
// `next()` on the loader's iterator.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace_model.h"

namespace perfprof {

inline constexpr std::string_view kDataLoaderPrefix = "enumerate(DataLoader)#";

struct DataPreprocess {
  std::string step;  // N of ProfilerStep#N
  uint64_t count = 0;    // fetches that began in the step
  int64_t total_ns = 0;  // their time inside the step (summed; fetches on several threads add up)
};

// Whether any DataLoader fetch was recorded.
bool has_data_loader_fetches(const TraceModel& model);

// One row per ProfilerStep#N range, in begin order.
std::vector<DataPreprocess> data_preprocess(const TraceModel& model);

}  // namespace perfprof
