// COMMUNICATION_OP (torch_npu's name): one row per collective or point-to-point operation of the
// rank (analysis/communication_ops.h), the rows perfprof cluster matches across ranks.
#include "analysis/communication_ops.h"
#include "export/database/table.h"
#include "export/database/tables.h"

namespace perfprof::db {
namespace {

struct CommunicationRef {
  Context& c;
  const CommunicationOp& op;
};

const Table<CommunicationRef> kCommunicationOp{
    "COMMUNICATION_OP",
    {
        {"opName", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.op.name); }},
        {"source", SqlType::Text,
         [](const CommunicationRef& r) { return SqlValue(communication_source_name(r.op.source)); }},
        {"startNs", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.c.time(r.op.begin_ns)); }},
        {"endNs", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.c.time(r.op.end_ns)); }},
        {"globalTid", SqlType::Integer,
         [](const CommunicationRef& r) { return r.op.track ? SqlValue(r.c.thread(*r.op.track)) : SqlValue(); }},
        {"deviceId", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.op.device); }},
        {"streamId", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.op.stream); }},
        // PYTORCH_API.id of the backend's range (the row's own, or the one around the launch).
        {"rangeId", SqlType::Integer,
         [](const CommunicationRef& r) { return r.op.range_row < 0 ? SqlValue() : SqlValue(r.op.range_row); }},
        {"count", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.op.elements); }},
        {"bytes", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.op.bytes); }},
        {"dataType", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.op.data_type); }},
        {"peer", SqlType::Integer, [](const CommunicationRef& r) { return SqlValue(r.op.peer); }},
    }};

}  // namespace

void write_communication_tables(Context& c) {
  TableWriter<CommunicationRef> writer(c.db, kCommunicationOp);
  for (const CommunicationOp& op : communication_ops(c.trace)) writer.insert({c, op});
}

}  // namespace perfprof::db
