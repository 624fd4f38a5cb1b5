// The capture reader's fuzz test: mutated captures of a small corpus of real ones (corpus/, made
// by make_corpus.py), each read, built and exported as `perfprof analyse` does, in a forked
// child so a crash or a hang is caught and named by its case. Each case must end in one of the
// reader's outcomes (refused in one line, read whole, read up to a problem stated in one line),
// within its memory budget (4x the capture + 200 MiB). A case that crashes is saved as a file to
// add to the corpus.
//
// PERFPROF_FUZZ_CASES (default 20000) and PERFPROF_FUZZ_SEED (default 1) change the run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "capture_fuzz/capture_case.h"
#include "capture_fuzz/capture_mutator.h"

namespace perfprof::fuzz {
namespace {

constexpr uint64_t kDefaultCases = 20'000;
constexpr uint64_t kDefaultSeed = 1;
// A case's limit: far beyond any case's time (milliseconds), so reaching it is a hang, not a
// slow machine.
constexpr unsigned kHangSeconds = 60;
constexpr uint64_t kDatabaseEvery = 100;  // one case in this many also writes the run database (SQLite: the slowest)
constexpr size_t kFailuresKept = 8;

struct CorpusCapture {
  std::string name;
  std::string bytes;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The captures of `dir`: corpus/ holds the real captures the cases mutate, corpus/found/ the
// cases that crashed the reader once (the fuzz test saves them; each is named for its damage).
std::vector<CorpusCapture> captures_in(const std::filesystem::path& dir) {
  std::vector<CorpusCapture> captures;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".ppcap") captures.push_back({entry.path().filename().string(), read_file(entry.path())});
  }
  std::sort(captures.begin(), captures.end(), [](const CorpusCapture& a, const CorpusCapture& b) { return a.name < b.name; });
  return captures;
}

uint64_t setting(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  return text == nullptr || *text == '\0' ? fallback : std::strtoull(text, nullptr, 0);
}

// What the children report to the parent, in memory they share.
struct Tally {
  uint64_t running = 0;  // the case a child runs now
  uint64_t cases = 0;
  uint64_t outcomes[4] = {};
  uint64_t mutations[kMutations] = {};
  uint64_t peak_bytes = 0;  // the largest case's
  uint64_t peak_case = 0;
  uint64_t peak_capture_bytes = 0;
  uint64_t failures = 0;
  char failure_text[kFailuresKept][400] = {};
};

class SharedTally {
 public:
  SharedTally()
      : tally_(static_cast<Tally*>(mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0))) {
    new (tally_) Tally();
  }
  ~SharedTally() { munmap(tally_, sizeof(Tally)); }
  SharedTally(const SharedTally&) = delete;
  SharedTally& operator=(const SharedTally&) = delete;
  Tally& operator*() const { return *tally_; }
  Tally* operator->() const { return tally_; }

 private:
  Tally* tally_;
};

void note_failure(Tally& tally, uint64_t index, const std::string& what) {
  if (tally.failures < kFailuresKept) {
    std::snprintf(tally.failure_text[tally.failures], sizeof(tally.failure_text[0]), "case %llu: %s",
                  static_cast<unsigned long long>(index), what.c_str());
  }
  ++tally.failures;
}

class FuzzRun {
 public:
  FuzzRun(std::vector<CorpusCapture> captures, uint64_t seed, const std::string& dir)
      : captures_(std::move(captures)), seed_(seed), dir_(dir) {}

  MutatedCapture case_bytes(uint64_t index) const {
    const CorpusCapture& capture = captures_[index % captures_.size()];
    return mutate(capture.bytes, seed_ * 0x9e3779b97f4a7c15ULL + index);
  }

  // Runs cases [first, end) in forked children; a child that dies is named by its case, and the
  // next child goes on after it.
  void run(uint64_t first, uint64_t end) {
    while (first < end) {
      const int status = run_child(first, end);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
      const uint64_t died = tally_->running;
      note_death(first, died, status);
      first = died + 1;
    }
  }

  const Tally& tally() const { return *tally_; }
  uint64_t crashes() const { return crashes_; }
  uint64_t hangs() const { return hangs_; }

 private:
  void run_in_child(uint64_t first, uint64_t end) {
    for (uint64_t index = first; index < end; ++index) {
      tally_->running = index;
      const MutatedCapture mutated = case_bytes(index);
      alarm(kHangSeconds);
      const CaseResult result = run_case(mutated.bytes, dir_, index % 2 == 1, index % kDatabaseEvery == 0);
      alarm(0);
      Tally& tally = *tally_;
      ++tally.cases;
      ++tally.outcomes[static_cast<int>(result.outcome)];
      ++tally.mutations[static_cast<int>(mutated.mutation)];
      if (result.outcome == Outcome::Failed) {
        note_failure(tally, index, fmt::format("{} ({}): {}", mutation_name(mutated.mutation),
                                               captures_[index % captures_.size()].name, result.failure));
      }
      if (result.peak_bytes > tally.peak_bytes) {
        tally.peak_bytes = result.peak_bytes;
        tally.peak_case = index;
        tally.peak_capture_bytes = mutated.bytes.size();
      }
    }
  }

  // Runs cases [first, end) in a forked child; returns its wait status.
  int run_child(uint64_t first, uint64_t end) {
    tally_->running = first;
    const pid_t child = fork();
    if (child == 0) {
      run_in_child(first, end);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return status;
  }

  // A case that crashed or hung, its child having run cases from `first`: counted, and its bytes
  // saved when it does so again alone (else an earlier case of the child broke its memory, which
  // the sanitizer build names).
  void note_death(uint64_t first, uint64_t index, int status) {
    const MutatedCapture mutated = case_bytes(index);
    const bool hung = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
    std::string what = hung ? fmt::format("hung (no end after {} s)", kHangSeconds)
                       : WIFSIGNALED(status) ? fmt::format("crashed: {}", strsignal(WTERMSIG(status)))
                                             : fmt::format("exited with status {}", WEXITSTATUS(status));
    ++(hung ? hangs_ : crashes_);
    ++tally_->cases;
    const Tally before = *tally_;
    const int alone = run_child(index, index + 1);
    *tally_ = before;  // the case is counted once
    if (WIFEXITED(alone) && WEXITSTATUS(alone) == 0) {
      what += fmt::format(", but not when run alone: one of cases {} to {} broke the process's memory", first, index - 1);
    } else {
      const std::string path = fmt::format("capture-fuzz-seed{}-case{}.ppcap", seed_, index);
      std::ofstream(path, std::ios::binary).write(mutated.bytes.data(), static_cast<std::streamsize>(mutated.bytes.size()));
      what += fmt::format("; saved as {}", std::filesystem::absolute(path).string());
    }
    note_failure(*tally_, index, fmt::format("{} ({}): {}", mutation_name(mutated.mutation),
                                             captures_[index % captures_.size()].name, what));
  }

  std::vector<CorpusCapture> captures_;
  uint64_t seed_;
  std::string dir_;
  SharedTally tally_;
  uint64_t crashes_ = 0;
  uint64_t hangs_ = 0;
};

// In memory where the machine has a tmpfs: the cases write a few files each.
std::string scratch_dir() {
  const std::filesystem::path root = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
  const std::filesystem::path dir = root / fmt::format("perfprof-fuzz-{}", getpid());
  std::filesystem::create_directories(dir);
  return dir.string();
}

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

TEST(CaptureFuzz, MutatedCapturesAreReadOrRefusedWithinTheirMemoryAndNeverCrashOrHang) {
  const std::vector<CorpusCapture> captures = captures_in(PERFPROF_CAPTURE_CORPUS);
  ASSERT_GE(captures.size(), 2u) << "the corpus is in " << PERFPROF_CAPTURE_CORPUS;
  const uint64_t cases = setting("PERFPROF_FUZZ_CASES", kDefaultCases);
  const uint64_t seed = setting("PERFPROF_FUZZ_SEED", kDefaultSeed);
  const std::string dir = scratch_dir();
  FuzzRun run(captures, seed, dir);
  run.run(0, cases);
  std::filesystem::remove_all(dir);

  const Tally& tally = run.tally();
  std::ostringstream stats;
  stats << fmt::format("capture fuzz: seed {}, {} cases over {} corpus captures: {} refused, {} read up to a problem, "
                       "{} read whole; failures {}, crashes {}, hangs {}\n",
                       seed, tally.cases, captures.size(), tally.outcomes[0], tally.outcomes[1], tally.outcomes[2],
                       tally.outcomes[3], run.crashes(), run.hangs());
  stats << "  mutations:";
  for (int m = 0; m < kMutations; ++m) stats << fmt::format(" {} {},", mutation_name(static_cast<Mutation>(m)), tally.mutations[m]);
  stats << fmt::format("\n  peak memory: {:.1f} MiB (case {}, a {:.1f} KiB capture; its budget {:.1f} MiB)\n",
                       mib(tally.peak_bytes), tally.peak_case, tally.peak_capture_bytes / 1024.0,
                       mib(memory_budget(tally.peak_capture_bytes)));
  std::cout << stats.str();
  for (uint64_t i = 0; i < std::min<uint64_t>(tally.failures, kFailuresKept); ++i) {
    ADD_FAILURE() << tally.failure_text[i];
  }
  EXPECT_EQ(tally.cases, cases);
  EXPECT_EQ(tally.failures, 0u);
  EXPECT_EQ(run.crashes(), 0u);
  EXPECT_EQ(run.hangs(), 0u);
  // Every kind of mutation ran, and each outcome happened: the cases reach past the checksum.
  for (int m = 0; m < kMutations; ++m) EXPECT_GT(tally.mutations[m], cases / kMutations / 2);
  EXPECT_GT(tally.outcomes[static_cast<int>(Outcome::Refused)], 0u);
  EXPECT_GT(tally.outcomes[static_cast<int>(Outcome::Incomplete)], cases / 10);
  EXPECT_GT(tally.outcomes[static_cast<int>(Outcome::Complete)], cases / 10);
}

// Every corpus file, crashes found earlier included, is read as it is.
TEST(CaptureFuzz, EveryCorpusCaptureIsReadOrRefused) {
  const std::string dir = scratch_dir();
  std::vector<CorpusCapture> captures = captures_in(PERFPROF_CAPTURE_CORPUS);
  std::vector<CorpusCapture> found = captures_in(std::filesystem::path(PERFPROF_CAPTURE_CORPUS) / "found");
  ASSERT_FALSE(found.empty());
  captures.insert(captures.end(), found.begin(), found.end());
  for (const CorpusCapture& capture : captures) {
    for (const bool from_file : {false, true}) {
      const CaseResult result = run_case(capture.bytes, dir, from_file, true);
      EXPECT_NE(result.outcome, Outcome::Failed) << capture.name << ": " << result.failure;
      EXPECT_LE(result.peak_bytes, memory_budget(capture.bytes.size())) << capture.name;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace perfprof::fuzz
