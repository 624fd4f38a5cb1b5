#include "record/collected_events.h"

#include <iterator>
#include <unordered_map>
#include <utility>

namespace perfprof {
namespace {

template <typename T>
void append(std::vector<T>& into, std::vector<T>& more) {
  into.insert(into.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

void append_threads(std::vector<ThreadEvents>& into, std::vector<ThreadEvents>& more) {
  std::unordered_map<uint32_t, size_t> row_of;
  for (size_t row = 0; row < into.size(); ++row) row_of.emplace(into[row].index, row);
  for (ThreadEvents& thread : more) {
    const auto found = row_of.find(thread.index);
    if (found == row_of.end()) {
      row_of.emplace(thread.index, into.size());
      into.push_back(std::move(thread));
      continue;
    }
    ThreadEvents& known = into[found->second];
    if (!thread.name.empty()) known.name = std::move(thread.name);
    append(known.events, thread.events);
  }
}

}  // namespace

uint64_t event_count(const CollectedEvents& collected) {
  uint64_t count = 0;
  for (const ThreadEvents& thread : collected.threads) count += thread.events.size();
  return count;
}

void append_collected(CollectedEvents& into, CollectedEvents more) {
  append_threads(into.threads, more.threads);
  append(into.completed, more.completed);
  memory::append_events(into.memory, std::move(more.memory));
  append(into.observed_tensors, more.observed_tensors);
  into.dropped_events += more.dropped_events;
  into.import_losses.events += more.import_losses.events;
  into.import_losses.failed_reads += more.import_losses.failed_reads;
}

}  // namespace perfprof
