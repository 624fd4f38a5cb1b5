#include "export/output_file.h"

#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

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

namespace {

// Beside the target (so the final rename stays on one file system), unique per process and call.
std::string unique_temp_path(const std::string& path) {
  static std::atomic<uint64_t> sequence{0};
  return fmt::format("{}.tmp{}.{}", path, getpid(), sequence.fetch_add(1));
}

}  // namespace

bool OutputFile::wants_gzip(std::string_view path) {
  return path.size() >= 3 && path.substr(path.size() - 3) == ".gz";
}

OutputFile::OutputFile(std::string path, int gzip_level)
    : path_(std::move(path)), temp_path_(unique_temp_path(path_)) {
  // The compressor first: if it throws, no file has been opened (the destructor would not run).
  if (wants_gzip(path_)) {
    try {
      compressor_ = std::make_unique<Compressor>(gzip_level);
    } catch (const std::runtime_error&) {
      throw std::runtime_error(
          fmt::format("cannot compress '{}': invalid gzip level {}", path_, gzip_level));
    }
  }
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (!file_) fail("cannot create");
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
  if (!committed_) std::remove(temp_path_.c_str());
}

void OutputFile::fail(const char* what) const {
  throw std::runtime_error(fmt::format("{} '{}': {}", what, path_, std::strerror(errno)));
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
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) fail("cannot create");
  committed_ = true;
}

}  // namespace perfprof
