#include "export/memory_timeline.h"

#include "common/json_text.h"
#include "export/output_file.h"

namespace perfprof {

void write_memory_timeline_json(const memory::MemoryTimeline& timeline, const std::string& path) {
  OutputFile file(path);
  std::string text = "[[";
  for (size_t i = 0; i < timeline.times_us.size(); ++i) {
    if (i > 0) text += ", ";
    append_int(text, timeline.times_us[i]);
    file.write_if_large(text);
  }
  text += "], [";
  for (size_t i = 0; i < timeline.bytes.size(); ++i) {
    text += i > 0 ? ", [0" : "[0";
    for (int64_t bytes : timeline.bytes[i]) {
      text += ", ";
      append_int(text, bytes);
    }
    text += ']';
    file.write_if_large(text);
  }
  text += "]]";
  file.write(text);
  file.commit();
}

void write_memory_timeline_raw(const memory::MemoryProfile& profile, memory::Device device, int64_t unix_offset_ns,
                               const std::string& path) {
  OutputFile file(path);
  std::string text = "[";
  bool first = true;
  for (const memory::CategoryChange& change : profile.changes) {
    if (change.device != device) continue;
    text += first ? "[" : ", [";
    first = false;
    append_int(text, change.time_ns == memory::kPreexistingTime ? change.time_ns : change.time_ns + unix_offset_ns);
    text += ", ";
    append_int(text, static_cast<int64_t>(change.action));
    text += ", ";
    append_int(text, change.bytes);
    text += ", ";
    append_int(text, static_cast<int64_t>(memory::index_of(change.category)));
    text += ']';
    file.write_if_large(text);
  }
  text += ']';
  file.write(text);
  file.commit();
}

}  // namespace perfprof
