#pragma once
// A file an exporter writes to. Data goes to a temporary file beside the target, gzip-compressed
// when the path ends in ".gz"; commit() renames it into place, so no reader ever sees a
// half-written file and a failed export leaves nothing behind.
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace perfprof {

// A temporary file beside `target` (so the final rename stays on one file system), created
// exclusively under a random name (`<target>.tmpXXXXXX`, mkstemp: a link planted at a name
// perfprof would use is never followed) with output_file_mode(). The file is removed unless it was
// renamed into place.
class TemporaryPath {
 public:
  // Throws std::runtime_error naming the target when the file cannot be created.
  explicit TemporaryPath(std::string target);
  ~TemporaryPath();
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;

  const std::string& path() const { return path_; }
  const std::string& target() const { return target_; }
  // The open file's descriptor, now the caller's to close.
  int take_descriptor();
  // Throws std::runtime_error naming the target when it cannot be.
  void rename_into_place();

 private:
  std::string target_;
  std::string path_;
  int descriptor_ = -1;
  bool renamed_ = false;
};

class OutputFile {
 public:
  // Throws std::runtime_error naming the path when the file cannot be created.
  explicit OutputFile(std::string path, int gzip_level = kDefaultGzipLevel);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view data);  // throws std::runtime_error on I/O errors
  // For exporters building text in a buffer: writes and empties it once it holds a megabyte.
  void write_if_large(std::string& buffer);
  void commit();                      // flushes, closes and renames into place

  const std::string& path() const { return temp_.target(); }
  static bool wants_gzip(std::string_view path);

  // Level 1: traces are repetitive text, so the fastest level already compresses ~10x.
  static constexpr int kDefaultGzipLevel = 1;
  static constexpr size_t kLargeBuffer = size_t{1} << 20;

 private:
  class Compressor;
  [[noreturn]] void fail(const char* what) const;
  void write_raw(const char* data, size_t size);

  TemporaryPath temp_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Compressor> compressor_;
};

}  // namespace perfprof
