#include "capture/capture_lock.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <vector>

namespace perfprof {
namespace {

struct LockedFile {
  dev_t device;
  ino_t inode;
  pid_t owner_pid;  // a forked child's copy of the list names its parent's files: not its own
};

// The captures this process holds locked: asked about, it answers from here rather than opening
// one (closing that descriptor would give its lock up).
class LockedFiles {
 public:
  static LockedFiles& instance() {
    static LockedFiles* const files = new LockedFiles();  // usable from other statics' destructors
    return *files;
  }
  void add(const LockedFile& file) {
    std::lock_guard<std::mutex> lock(mutex_);
    files_.push_back(file);
  }
  void remove(dev_t device, ino_t inode) {
    std::lock_guard<std::mutex> lock(mutex_);
    files_.erase(std::remove_if(files_.begin(), files_.end(),
                                [&](const LockedFile& file) { return file.device == device && file.inode == inode; }),
                 files_.end());
  }
  bool held_here(const struct stat& file) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::any_of(files_.begin(), files_.end(), [&](const LockedFile& held) {
      return held.device == file.st_dev && held.inode == file.st_ino && held.owner_pid == getpid();
    });
  }

 private:
  // A fork while another thread changes the list would leave its mutex locked in the child
  // forever (an analyse worker forked from a profiled process asks it): the forking thread holds it.
  LockedFiles() {
    pthread_atfork(&LockedFiles::lock_for_fork, &LockedFiles::unlock_after_fork, &LockedFiles::unlock_after_fork);
  }
  static void lock_for_fork() { instance().mutex_.lock(); }
  static void unlock_after_fork() { instance().mutex_.unlock(); }

  mutable std::mutex mutex_;
  std::vector<LockedFile> files_;
};

struct flock whole_file(short type) {
  struct flock range {};
  range.l_type = type;
  range.l_whence = SEEK_SET;
  range.l_start = 0;
  range.l_len = 0;  // to the end, however far the file grows
  return range;
}

}  // namespace

WriterLock::WriterLock(int fd) : fd_(fd), owner_pid_(getpid()) {
  struct stat file {};
  if (fd_ < 0 || ::fstat(fd_, &file) != 0) return;
  struct flock range = whole_file(F_WRLCK);
  if (::fcntl(fd_, F_SETLK, &range) != 0) return;
  device_ = file.st_dev;
  inode_ = file.st_ino;
  held_ = true;
  LockedFiles::instance().add({device_, inode_, owner_pid_});
}

void WriterLock::release() {
  if (!held_ || getpid() != owner_pid_) return;
  held_ = false;
  LockedFiles::instance().remove(device_, inode_);
  struct flock range = whole_file(F_UNLCK);
  ::fcntl(fd_, F_SETLK, &range);
}

pid_t capture_writer_pid(const std::string& path) {
  struct stat file {};
  if (::stat(path.c_str(), &file) != 0) return 0;
  if (LockedFiles::instance().held_here(file)) return getpid();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  // Another process's write lock conflicts with the read lock asked about; F_GETLK describes it.
  struct flock range = whole_file(F_RDLCK);
  const bool asked = ::fcntl(fd, F_GETLK, &range) == 0;
  ::close(fd);
  return asked && range.l_type != F_UNLCK ? range.l_pid : 0;
}

}  // namespace perfprof
