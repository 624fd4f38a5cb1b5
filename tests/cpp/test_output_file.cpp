#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/file_mode.h"
#include "export/output_file.h"
#include "test_util.h"

namespace perfprof {
namespace {

using test::read_file;
using test::TempDir;
using Names = std::vector<std::string>;

// A few MB of trace-like text with incompressible bytes mixed in, so the compressor's output
// buffer fills several times.
std::string sample_content() {
  std::mt19937 random(12345);
  std::string text;
  for (int line = 0; line < 40'000; ++line) {
    text += "{\"ph\":\"X\",\"name\":\"op_" + std::to_string(line % 97) + "\",\"noise\":\"";
    for (int k = 0; k < 16; ++k) text += static_cast<char>(random() & 0xFF);
    text += "\"},\n";
  }
  return text;
}

// Expects `action` to throw std::runtime_error whose message contains `path`.
template <typename Action>
void expect_error_naming(const std::string& path, Action&& action) {
  try {
    action();
    ADD_FAILURE() << "no error for " << path;
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
  }
}

TEST(OutputFile, WritesThePlainFileOnlyOnCommit) {
  TempDir dir;
  const std::string path = dir.file("trace.json");
  OutputFile file(path);
  EXPECT_EQ(file.path(), path);
  file.write("hello ");
  file.write("");
  file.write("world");
  EXPECT_FALSE(std::filesystem::exists(path)) << "readers must never see a half-written file";
  file.commit();
  EXPECT_EQ(read_file(path), "hello world");
  EXPECT_EQ(dir.entries(), Names{"trace.json"}) << "the temporary file was left behind";
}

TEST(OutputFile, GzPathWritesGzipThatZlibReads) {
  TempDir dir;
  const std::string path = dir.file("trace.json.gz");
  const std::string content = sample_content();
  {
    OutputFile file(path);
    constexpr size_t kPiece = 100'000;
    for (size_t at = 0; at < content.size(); at += kPiece) {
      file.write(std::string_view(content).substr(at, kPiece));
    }
    file.commit();
  }
  const std::string raw = read_file(path);
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1F);  // gzip magic, not zlib or raw deflate
  EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x8B);
  EXPECT_LT(raw.size(), content.size());
  EXPECT_TRUE(test::read_gzip_file(path) == content) << "decompressed bytes differ";
  EXPECT_EQ(dir.entries(), Names{"trace.json.gz"});
}

TEST(OutputFile, EmptyGzipFileIsValid) {
  TempDir dir;
  const std::string path = dir.file("empty.gz");
  OutputFile file(path);
  file.commit();
  EXPECT_EQ(test::read_gzip_file(path), "");
}

TEST(OutputFile, GzipSuffixDetection) {
  EXPECT_TRUE(OutputFile::wants_gzip("trace.json.gz"));
  EXPECT_TRUE(OutputFile::wants_gzip(".gz"));
  EXPECT_FALSE(OutputFile::wants_gzip("trace.json"));
  EXPECT_FALSE(OutputFile::wants_gzip("trace.gzip"));
  EXPECT_FALSE(OutputFile::wants_gzip("gz"));
}

TEST(OutputFile, MissingDirectoryThrowsNamingThePath) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/trace.json");
  expect_error_naming(path, [&] { OutputFile file(path); });
  EXPECT_TRUE(dir.entries().empty());
}

TEST(OutputFile, DestroyedWithoutCommitLeavesNothing) {
  TempDir dir;
  for (const char* name : {"trace.json", "trace.json.gz"}) {
    OutputFile file(dir.file(name));
    file.write(std::string(1 << 20, 'x'));
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(OutputFile, CommitReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.file("trace.json");
  test::write_file(path, "an older, longer trace that must disappear entirely");
  OutputFile file(path);
  file.write("new");
  EXPECT_EQ(read_file(path), "an older, longer trace that must disappear entirely")
      << "the old file must stay intact until commit";
  file.commit();
  EXPECT_EQ(read_file(path), "new");
  EXPECT_EQ(dir.entries(), Names{"trace.json"});
}

TEST(OutputFile, FailedCommitThrowsAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::string path = dir.file("trace.json");
  std::filesystem::create_directory(path);  // the target is a directory: rename() fails
  {
    OutputFile file(path);
    file.write("data");
    expect_error_naming(path, [&] { file.commit(); });
  }
  EXPECT_EQ(dir.entries(), Names{"trace.json"});
  EXPECT_TRUE(std::filesystem::is_directory(path));
}

TEST(OutputFile, InvalidGzipLevelThrowsAndLeavesNothing) {
  TempDir dir;
  EXPECT_THROW(OutputFile(dir.file("trace.json.gz"), 42), std::runtime_error);
  EXPECT_TRUE(dir.entries().empty()) << "a failed export must leave nothing behind";
}

// The temporary file exists from construction, under a random name of its own (so two writers of
// one target never share it, and a name planted beforehand is never used), with the output mode.
TEST(TemporaryPath, IsCreatedExclusivelyUnderARandomNameWithTheOutputMode) {
  TempDir dir;
  const std::string target = dir.file("trace.json");
  TemporaryPath first(target), second(target);
  EXPECT_NE(first.path(), second.path());
  for (const TemporaryPath* temporary : {&first, &second}) {
    // .tmp<pid>-XXXXXX: the pid tells a later process whether the writer still runs.
    const std::string prefix = target + ".tmp" + std::to_string(getpid()) + "-";
    EXPECT_EQ(temporary->path().rfind(prefix, 0), 0u) << temporary->path();
    EXPECT_EQ(temporary->path().size(), prefix.size() + 6);
    const auto permissions = std::filesystem::status(temporary->path()).permissions();
    EXPECT_EQ(static_cast<unsigned>(permissions), output_file_mode());
    EXPECT_EQ(output_file_mode(), 0640u);  // no PERFPROF_FILE_MODE in the tests' environment
  }
  expect_error_naming(dir.file("missing/trace.json"), [&] { TemporaryPath(dir.file("missing/trace.json")); });
}

}  // namespace
}  // namespace perfprof
