#include "export/output_file.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/file_mode.h"

namespace perfprof {

class OutputFile::Compressor {
 public:
  explicit Compressor(int level) : out_(kOutChunk) {
    // windowBits 15 + 16: a gzip header and trailer instead of a raw zlib stream.
    if (deflateInit2(&stream_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw std::runtime_error("perfprof: cannot initialise gzip compression");
    }
  }
  ~Compressor() { deflateEnd(&stream_); }

  template <typename Sink>
  void compress(const char* data, size_t size, int flush, Sink&& sink) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    stream_.avail_in = static_cast<uInt>(size);
    do {
      stream_.next_out = out_.data();
      stream_.avail_out = static_cast<uInt>(out_.size());
      deflate(&stream_, flush);
      sink(reinterpret_cast<const char*>(out_.data()), out_.size() - stream_.avail_out);
    } while (stream_.avail_out == 0 || (flush == Z_FINISH && stream_.avail_in > 0));
  }

 private:
  static constexpr size_t kOutChunk = 1 << 18;
  z_stream stream_{};
  std::vector<Bytef> out_;
};

TemporaryPath::TemporaryPath(std::string target) : target_(std::move(target)) {
  // The pid in the name tells a later process whether the writer is still alive (_files.py removes
  // the temporary files of writers that were killed).
  std::string name = fmt::format("{}.tmp{}-XXXXXX", target_, getpid());
  descriptor_ = mkstemp(name.data());  // O_CREAT | O_EXCL under a random name
  if (descriptor_ < 0) throw std::runtime_error(fmt::format("cannot create '{}': {}", target_, std::strerror(errno)));
  path_ = std::move(name);
  fchmod(descriptor_, output_file_mode());
}

TemporaryPath::~TemporaryPath() {
  if (descriptor_ >= 0) close(descriptor_);
  if (!renamed_) std::remove(path_.c_str());
}

int TemporaryPath::take_descriptor() {
  const int descriptor = descriptor_;
  descriptor_ = -1;
  return descriptor;
}

void TemporaryPath::rename_into_place() {
  if (std::rename(path_.c_str(), target_.c_str()) != 0) {
    throw std::runtime_error(fmt::format("cannot create '{}': {}", target_, std::strerror(errno)));
  }
  renamed_ = true;
}

bool OutputFile::wants_gzip(std::string_view path) {
  return path.size() >= 3 && path.substr(path.size() - 3) == ".gz";
}

OutputFile::OutputFile(std::string path, int gzip_level) : temp_(std::move(path)) {
  // The compressor first: if it throws, no file has been opened (the destructor would not run).
  if (wants_gzip(temp_.target())) {
    try {
      compressor_ = std::make_unique<Compressor>(gzip_level);
    } catch (const std::runtime_error&) {
      throw std::runtime_error(
          fmt::format("cannot compress '{}': invalid gzip level {}", temp_.target(), gzip_level));
    }
  }
  const int descriptor = temp_.take_descriptor();
  file_ = fdopen(descriptor, "wb");
  if (!file_) {
    close(descriptor);
    fail("cannot create");
  }
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);  // before temp_ removes the file
}

void OutputFile::fail(const char* what) const {
  throw std::runtime_error(fmt::format("{} '{}': {}", what, temp_.target(), std::strerror(errno)));
}

void OutputFile::write_raw(const char* data, size_t size) {
  if (size && std::fwrite(data, 1, size, file_) != size) fail("cannot write");
}

void OutputFile::write(std::string_view data) {
  if (!compressor_) return write_raw(data.data(), data.size());
  compressor_->compress(data.data(), data.size(), Z_NO_FLUSH,
                        [this](const char* out, size_t n) { write_raw(out, n); });
}

void OutputFile::write_if_large(std::string& buffer) {
  if (buffer.size() < kLargeBuffer) return;
  write(buffer);
  buffer.clear();
}

void OutputFile::commit() {
  if (compressor_) {
    compressor_->compress(nullptr, 0, Z_FINISH,
                          [this](const char* out, size_t n) { write_raw(out, n); });
  }
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) fail("cannot write");
  temp_.rename_into_place();
}

}  // namespace perfprof
