// Makes one of each mstx call through perfprof, for test_nvtx_injection.cpp to run with an NVTX
// injection attached. Also checks that perfprof's own recording is unaffected by the tool.
// Exit status: 0 on success, 1 if perfprof did not record the expected events.
#include <cstdio>

#include "mstx/mstx.h"
#include "record/recorder.h"

int main() {
  using namespace perfprof;
  Recorder& recorder = Recorder::instance();
  recorder.set_channels(kChannelMstx);

  Mstx& mstx = Mstx::instance();
  MstxDomain& domain = mstx.domain("train");
  mstx.mark(domain, global_strings().intern("epoch 1 begins"), "epoch 1 begins", domain.args);
  const uint64_t id =
      mstx.range_start(domain, global_strings().intern("forward pass"), "forward pass", domain.args);
  mstx.range_end(id);

  size_t events = 0;
  for (const ThreadEvents& thread : recorder.collect().threads) events += thread.events.size();
  if (events != 3) {  // mark, range begin, range end
    std::fprintf(stderr, "perfprof recorded %zu events, expected 3\n", events);
    return 1;
  }
  return 0;
}
