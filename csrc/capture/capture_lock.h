#pragma once
// A capture being written is locked by its writer, so that `perfprof analyse` leaves it alone:
// a POSIX record lock (fcntl F_SETLK, F_WRLCK) on the whole file, taken before its first byte is
// written and given up when it is ended. The kernel drops the lock with the process holding it,
// however it ends (killed included), and a forked child does not inherit it: a reader finding the
// lock held knows the writer is alive, whatever pid reuse did since, and F_GETLK names its pid.
//
// POSIX locks belong to a (process, file) pair and are given up when that process closes any
// descriptor of the file, so the writing process must never open its own capture to ask: its
// captures are known here without opening them (see capture_writer_pid).
#include <sys/types.h>

#include <string>

namespace perfprof {

class WriterLock {
 public:
  // Locks the file open for writing at `fd` (nothing when `fd` is negative). Not holding it
  // (a file system without locks) is no error: the capture is written as before, unguarded.
  explicit WriterLock(int fd);
  ~WriterLock() { release(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  // Gives the lock up (nothing in a forked child's copy, which never held it).
  void release();
  bool held() const { return held_; }

 private:
  int fd_;
  pid_t owner_pid_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool held_ = false;
};

// The pid of the live process writing the capture at `path`; 0 when none does (the writer ended
// it, or was killed), or when `path` cannot be opened.
pid_t capture_writer_pid(const std::string& path);

}  // namespace perfprof
