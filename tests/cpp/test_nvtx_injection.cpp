// perfprof emits every mstx call as NVTX3, so Nsight Systems sees the markers. This runs
// perfprof_nvtx_emitter in a child process with the stub injection library attached (NVTX loads
// its injection once per process, at the first NVTX call, so it cannot be done in this one) and
// checks what the "tool" received.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace perfprof {
namespace {

using Fields = std::vector<std::string>;

struct ChildResult {
  int exit_status = -1;
  std::string log;  // the stub's log; empty if it wrote none
};

// Runs `program` with the current environment plus `extra_env` ("NAME=value" entries, which
// take precedence), and waits for it.
int run_with_env(const std::string& program, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env = extra_env;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('=') + 1);
    bool overridden = false;
    for (const std::string& extra : extra_env) overridden |= extra.rfind(name, 0) == 0;
    if (!overridden) env.push_back(text);
  }
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string program_copy = program;
  char* argv[] = {program_copy.data(), nullptr};

  pid_t pid = 0;
  if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

ChildResult run_emitter(const std::string& injection_path) {
  test::TempDir dir;
  const std::string log_path = dir.file("nvtx.log");
  ChildResult result;
  result.exit_status = run_with_env(PERFPROF_NVTX_EMITTER, {"NVTX_INJECTION64_PATH=" + injection_path,
                                                            "PERFPROF_NVTX_STUB_LOG=" + log_path});
  if (std::filesystem::exists(log_path)) result.log = test::read_file(log_path);
  return result;
}

std::vector<Fields> parse_log(const std::string& log) {
  std::vector<Fields> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    Fields fields;
    std::istringstream columns(line);
    for (std::string field; std::getline(columns, field, '\t');) fields.push_back(field);
    lines.push_back(std::move(fields));
  }
  return lines;
}

TEST(NvtxInjection, MstxCallsReachTheAttachedTool) {
  const ChildResult child = run_emitter(PERFPROF_NVTX_INJECTION_STUB);
  ASSERT_EQ(child.exit_status, 0) << "emitter failed; stub log:\n" << child.log;
  const std::vector<Fields> log = parse_log(child.log);
  ASSERT_EQ(log.size(), 5u) << child.log;

  EXPECT_EQ(log[0], Fields{"init"});
  EXPECT_EQ(log[1], (Fields{"domain_create", "train"}));
  EXPECT_EQ(log[2], (Fields{"mark", "train", "epoch 1 begins"}));
  ASSERT_EQ(log[3].size(), 4u) << child.log;
  EXPECT_EQ(log[3][0], "range_start");
  EXPECT_EQ(log[3][1], "train");
  EXPECT_EQ(log[3][2], "forward pass");
  EXPECT_EQ(log[3][3], std::to_string(0x5EED0001)) << "the stub's first range id";
  // perfprof hands the tool's own range id back, not perfprof's.
  EXPECT_EQ(log[4], (Fields{"range_end", "train", log[3][3]}));
}

TEST(NvtxInjection, EmitterRunsWithoutATool) {
  // "./." is NVTX's explicit "no injection"; perfprof must work the same without a tool.
  const ChildResult child = run_emitter("./.");
  EXPECT_EQ(child.exit_status, 0);
  EXPECT_EQ(child.log, "");
}

}  // namespace
}  // namespace perfprof
