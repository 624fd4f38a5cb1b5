#pragma once
// Where a capture's bytes go (memray's model: the recording side writes through a Sink and never
// knows whether it is a file, nothing, or a test's buffer). Sinks never throw: a failed write
// returns false, and error() says why, for the one line the caller logs.
#include <cstdint>
#include <string>
#include <string_view>

namespace perfprof {

class Sink {
 public:
  virtual ~Sink() = default;
  // Appends `bytes`; false when they could not all be written.
  virtual bool write(std::string_view bytes) = 0;
  // Why the first failed write failed; empty while none has.
  virtual std::string error() const = 0;
};

// Appends to a file it creates on construction: exclusively (a file, or a link planted, at
// `path` is an error, never followed) and with mode 0640 whatever the umask. Bytes written
// reach the kernel at once (no user-space buffer), so they survive the process being killed. A
// write that fails (disk full) is cut off the file: it ends with the last whole write.
class FileSink final : public Sink {
 public:
  explicit FileSink(const std::string& path);
  ~FileSink() override;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  bool write(std::string_view bytes) override;
  std::string error() const override { return error_; }
  bool failed() const { return !error_.empty(); }  // nothing more is written
  // Bytes the file holds.
  uint64_t size() const { return size_; }
  // Cuts the file back to `size` bytes (taking back writes after it); nothing can be written
  // afterwards.
  void cut_to(uint64_t size);
  // Nothing more is written, for `why` (unless a write failed before).
  void abandon(const std::string& why) {
    if (error_.empty()) error_ = why;
  }
  // Whether `path` no longer names the file written (removed or replaced while open).
  bool moved() const;
  // A path the file written can be read back from: `path`, or the open descriptor's when moved.
  std::string readable_path() const;
  // The open file's descriptor (-1 when it could not be created), for locking it.
  int descriptor() const { return fd_; }

 private:
  void fail(const char* what);

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string error_;
};

// Counts what it is given and keeps nothing (a capture written nowhere, or its size measured).
class NullSink final : public Sink {
 public:
  bool write(std::string_view bytes) override {
    bytes_ += bytes.size();
    return true;
  }
  std::string error() const override { return {}; }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

// Keeps what it is given in memory (a capture built and read back in one process, tests).
class StringSink final : public Sink {
 public:
  bool write(std::string_view bytes) override {
    bytes_.append(bytes);
    return true;
  }
  std::string error() const override { return {}; }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace perfprof
