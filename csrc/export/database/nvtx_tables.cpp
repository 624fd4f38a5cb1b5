// mstx marks and ranges as Nsight Systems exports NVTX (NVTX_EVENTS), so its NVTX recipes read
// them: marks are eventType 34 (NvtxMark), ranges 60 (NvtxStartEndRange: mstx ranges are
// start/end ranges and may end on another thread), and each domain other than mstx's "default"
// (nsys's default domain, id 0) has a creation row, eventType 75 (NvtxDomainCreate) with the
// domain's name as text, at its first event.
#include <map>
#include <optional>

#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

constexpr int kMark = 34;
constexpr int kStartEndRange = 60;
constexpr int kDomainCreate = 75;
constexpr std::string_view kDefaultDomain = "default";

struct NvtxRow {
  int64_t start;
  std::optional<int64_t> end;
  int event_type;
  std::string_view text;
  int64_t global_tid;
  std::optional<int64_t> end_global_tid;
  uint32_t domain;
};

const Table<NvtxRow> kNvtxEvents{
    "NVTX_EVENTS",
    {
        {"start", SqlType::Integer, [](const NvtxRow& r) { return SqlValue(r.start); }},
        {"end", SqlType::Integer, [](const NvtxRow& r) { return SqlValue(r.end); }},
        {"eventType", SqlType::Integer, [](const NvtxRow& r) { return SqlValue(r.event_type); }},
        {"rangeId", SqlType::Integer, [](const NvtxRow&) { return SqlValue(); }},
        // Messages are plain strings (not NVTX registered strings): nsys writes those as text.
        {"text", SqlType::Text, [](const NvtxRow& r) { return SqlValue(r.text); }},
        {"textId", SqlType::Integer, [](const NvtxRow&) { return SqlValue(); }},
        {"globalTid", SqlType::Integer, [](const NvtxRow& r) { return SqlValue(r.global_tid); }},
        {"endGlobalTid", SqlType::Integer, [](const NvtxRow& r) { return SqlValue(r.end_global_tid); }},
        {"domainId", SqlType::Integer, [](const NvtxRow& r) { return SqlValue(r.domain); }},
    }};

// Domain ids in order of first event; rows creating them, written before the events.
class Domains {
 public:
  explicit Domains(const Context& c) : c_(c) {}

  uint32_t id(ArgSetId args, int64_t time, int64_t global_tid) {
    const StringId* name = c_.model.args(args).find<StringId>(ArgKey::Domain);
    if (name == nullptr || c_.model.str(*name) == kDefaultDomain) return 0;
    auto [found, added] = ids_.try_emplace(*name, static_cast<uint32_t>(ids_.size() + 1));
    if (added) creations_.push_back({time, std::nullopt, kDomainCreate, c_.model.str(*name), global_tid, std::nullopt, found->second});
    // A later event may come first in time (rows are per track): the creation takes the earliest.
    NvtxRow& creation = creations_[found->second - 1];
    if (time < creation.start) creation.start = time;
    return found->second;
  }
  const std::vector<NvtxRow>& creations() const { return creations_; }

 private:
  const Context& c_;
  std::map<StringId, uint32_t> ids_;
  std::vector<NvtxRow> creations_;
};

}  // namespace

void write_nvtx_tables(Context& c) {
  Domains domains(c);
  std::vector<NvtxRow> events;
  const InstantTable& marks = c.model.instants;
  for (size_t i = 0; i < marks.size(); ++i) {
    if (marks.kind[i] != RangeKind::Mstx) continue;
    const int64_t start = c.time(marks.ts_ns[i]);
    const int64_t tid = c.thread(marks.track[i]);
    events.push_back({start, std::nullopt, kMark, c.model.str(marks.name[i]), tid, std::nullopt,
                      domains.id(marks.args[i], start, tid)});
  }
  const RangeTable& r = c.model.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::Mstx) continue;
    const int64_t start = c.time(r.begin_ns[i]);
    const int64_t tid = c.thread(r.track[i]);
    events.push_back({start, c.time(r.end_ns[i]), kStartEndRange, c.model.str(r.name[i]), tid,
                      c.thread(r.end_track[i]), domains.id(r.args[i], start, tid)});
  }
  TableWriter<NvtxRow> table(c.db, kNvtxEvents);
  for (const NvtxRow& row : domains.creations()) table.insert(row);
  for (const NvtxRow& row : events) table.insert(row);
}

}  // namespace perfprof::db
