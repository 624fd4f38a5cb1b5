#include "test_util.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "torch_hooks/op_text.h"

namespace perfprof::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "perfprof-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed: " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> TempDir::entries() const {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_gzip_file(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw std::runtime_error("gzopen failed: " + path);
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  const bool failed = n < 0 || (error != Z_OK && error != Z_STREAM_END);
  const std::string what = failed ? std::string(message) : std::string();
  gzclose(file);
  if (failed) ADD_FAILURE() << "gzread failed on " << path << ": " << what;
  return text;
}

namespace {

RawEvent make_event(EventKind kind, int64_t ts_ns, uint64_t payload, StringId name, RangeKind range_kind,
                    ArgSetId args) {
  return {ts_ns, payload, name, args, kind, range_kind, {}};
}

}  // namespace

RangeKind kind_named(std::string_view category, std::string_view name) {
  if (category == "user_annotation" && name.rfind("ProfilerStep#", 0) == 0) return RangeKind::Step;
  for (const RangeKind kind : {RangeKind::CpuOp, RangeKind::UserAnnotation, RangeKind::PythonFunction, RangeKind::Gc,
                               RangeKind::CudaRuntime, RangeKind::CudaDriver}) {
    if (category_name(kind) == category) return kind;
  }
  return RangeKind::Other;
}

ArgSet int_arg(ArgKey key, int64_t value) { return {{{key, value}}}; }

ArgSet text_arg(ArgKey key, std::string_view text) { return {{{key, intern(text)}}}; }

ArgSet input_dims_arg(std::string_view dims) {
  std::optional<IntTree> tree = parse_int_lists(dims);
  EXPECT_TRUE(tree.has_value()) << dims;
  return {{{ArgKey::InputDims, tree.value_or(IntTree{})}}};
}

RawEvent begin_event(int64_t ts_ns, uint64_t id, std::string_view name,
                     std::string_view category, const ArgSet& args) {
  return make_event(EventKind::RangeBegin, ts_ns, id, intern(name), kind_named(category, name),
                    global_arg_sets().intern(args));
}

RawEvent end_event(int64_t ts_ns, uint64_t id) {
  return make_event(EventKind::RangeEnd, ts_ns, id, kEmptyString, RangeKind::Other, kNoArgs);
}

RawEvent instant_event(int64_t ts_ns, std::string_view name, std::string_view category,
                       const ArgSet& args) {
  return make_event(EventKind::Instant, ts_ns, 0, intern(name), kind_named(category, name), global_arg_sets().intern(args));
}

RawEvent counter_event(int64_t ts_ns, std::string_view name, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return make_event(EventKind::Counter, ts_ns, bits, intern(name), RangeKind::Other, kNoArgs);
}

ThreadEvents thread_events(uint32_t index, int64_t os_tid, std::string name,
                           std::vector<RawEvent> events) {
  return {index, os_tid, std::move(name), std::move(events)};
}

RecorderSession::RecorderSession(uint32_t channels) {
  Recorder::instance().discard();
  Recorder::instance().set_channels(channels);
}

RecorderSession::~RecorderSession() {
  Recorder::instance().set_channels(0);
  Recorder::instance().discard();
}

std::vector<RawEvent> all_events(const CollectedEvents& collected) {
  std::vector<RawEvent> events;
  for (const ThreadEvents& thread : collected.threads) {
    events.insert(events.end(), thread.events.begin(), thread.events.end());
  }
  return events;
}

}  // namespace perfprof::test
