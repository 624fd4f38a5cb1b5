#include "capture/sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/file_mode.h"

namespace perfprof {

FileSink::FileSink(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, output_file_mode());
  if (fd_ < 0) {
    fail("cannot create");
  } else if (::fchmod(fd_, output_file_mode()) != 0) {
    fail("cannot set the mode of");
  }
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileSink::write(std::string_view bytes) {
  if (fd_ < 0 || !error_.empty()) return false;
  const uint64_t size_before = size_;
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      if (written == 0) errno = EIO;  // no progress and no error: treat as one
      fail("cannot write");
      cut_to(size_before);  // a reader then finds whole writes only
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
    size_ += static_cast<uint64_t>(written);
  }
  return true;
}

void FileSink::cut_to(uint64_t size) {
  if (error_.empty()) error_ = fmt::format("{} was cut back to {} bytes", path_, size);
  if (fd_ < 0 || size >= size_) return;
  if (::ftruncate(fd_, static_cast<off_t>(size)) == 0) size_ = size;
}

bool FileSink::moved() const {
  if (fd_ < 0) return false;
  struct stat at_path {};
  struct stat open_file {};
  if (::fstat(fd_, &open_file) != 0) return false;
  return ::stat(path_.c_str(), &at_path) != 0 || at_path.st_ino != open_file.st_ino ||
         at_path.st_dev != open_file.st_dev;
}

std::string FileSink::readable_path() const {
  return moved() ? fmt::format("/proc/self/fd/{}", fd_) : path_;
}

void FileSink::fail(const char* what) {
  if (error_.empty()) error_ = fmt::format("{} {}: {}", what, path_, std::strerror(errno));
}

}  // namespace perfprof
