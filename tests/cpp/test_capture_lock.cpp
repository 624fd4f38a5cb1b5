// A capture being written is locked by its writer (capture/capture_lock.h): another process sees
// who writes it, for as long as that process lives and has not ended it.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "capture/capture_lock.h"
#include "capture/capture_stream.h"
#include "common/clock.h"
#include "test_util.h"

namespace perfprof {
namespace {

using test::TempDir;

// What capture_writer_pid(path) says in a forked child (another process than the writer).
pid_t writer_seen_by_another_process(const std::string& path) {
  int answer[2];
  EXPECT_EQ(::pipe(answer), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    const int64_t writer = capture_writer_pid(path);
    _exit(::write(answer[1], &writer, sizeof writer) == sizeof writer ? 0 : 1);
  }
  ::close(answer[1]);
  int64_t writer = -1;
  EXPECT_EQ(::read(answer[0], &writer, sizeof writer), static_cast<ssize_t>(sizeof writer));
  ::close(answer[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return static_cast<pid_t>(writer);
}

TEST(CaptureLock, ACaptureBeingWrittenNamesItsWriterUntilItIsEnded) {
  const TempDir dir;
  const std::string path = dir.file("live.ppcap");
  CaptureStream stream(path);
  ASSERT_TRUE(stream.ok()) << stream.error();
  EXPECT_EQ(writer_seen_by_another_process(path), getpid());
  // The writer asking about its own capture is told without the lock being given up.
  EXPECT_EQ(capture_writer_pid(path), getpid());
  EXPECT_EQ(writer_seen_by_another_process(path), getpid());
  ASSERT_TRUE(stream.finish({}, {now_ns(), now_ns()}));
  EXPECT_EQ(writer_seen_by_another_process(path), 0);
  EXPECT_EQ(capture_writer_pid(path), 0);
}

TEST(CaptureLock, AStreamDroppedWithoutEndingItsCaptureNoLongerWritesIt) {
  const TempDir dir;
  const std::string path = dir.file("dropped.ppcap");
  { CaptureStream stream(path); }
  EXPECT_EQ(writer_seen_by_another_process(path), 0);
}

TEST(CaptureLock, TheLockDiesWithItsWriter) {
  const TempDir dir;
  const std::string path = dir.file("killed.ppcap");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t writer = ::fork();
  if (writer == 0) {  // writes, says so, and waits to be killed
    CaptureStream stream(path);
    const char byte = stream.ok() ? 'y' : 'n';
    if (::write(ready[1], &byte, 1) != 1) _exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  EXPECT_EQ(byte, 'y');
  EXPECT_EQ(capture_writer_pid(path), writer);
  ::kill(writer, SIGKILL);
  int status = 0;
  ::waitpid(writer, &status, 0);
  EXPECT_EQ(capture_writer_pid(path), 0);  // the file is left, unended and unlocked, for perfprof analyse
}

TEST(CaptureLock, AForkedChildOfTheWriterDoesNotHoldItsLock) {
  const TempDir dir;
  const std::string path = dir.file("parent.ppcap");
  CaptureStream stream(path);
  int done[2];
  ASSERT_EQ(::pipe(done), 0);
  const pid_t child = ::fork();
  if (child == 0) {  // a DataLoader worker, say: lives on, holding a copy of the descriptor
    ::close(done[1]);
    char byte = 0;
    _exit(::read(done[0], &byte, 1) == 0 ? 0 : 1);  // until the parent closes its end
  }
  ::close(done[0]);
  ASSERT_TRUE(stream.finish({}, {now_ns(), now_ns()}));
  EXPECT_EQ(writer_seen_by_another_process(path), 0);  // the child does not keep it locked
  ::close(done[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(CaptureLock, NoCaptureNoWriter) {
  const TempDir dir;
  EXPECT_EQ(capture_writer_pid(dir.file("missing.ppcap")), 0);
}

}  // namespace
}  // namespace perfprof
