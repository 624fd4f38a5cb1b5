#pragma once
// A structured mutator of capture files (docs/formats/capture.md) for the reader's fuzz test.
// Most mutations change a chunk's payload and recompute its checksum, so the case reaches the
// checks past the CRC; the rest damage the framing (chunk sizes and kinds, chunks dropped,
// repeated or swapped, the file cut short) or are random bytes. A case is a function of the
// seed and the input alone: a failing case is reproduced from its seed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace perfprof::fuzz {

// Where a chunk lies in a capture's bytes.
struct ChunkSpan {
  uint64_t offset = 0;  // of its header
  uint32_t kind = 0;
  uint64_t payload_size = 0;
};

// The whole chunks of `bytes` after its file header, up to the first that does not fit.
std::vector<ChunkSpan> chunks_of(std::string_view bytes);

// Sets the CRC of the chunk at `span` to its payload's.
void fix_checksum(std::string& bytes, const ChunkSpan& span);

// The mutations, named in the fuzz test's statistics.
enum class Mutation { PayloadBytes, PayloadValues, PayloadSplice, ResizePayload, Framing, Chunks, Truncate, Random };
inline constexpr int kMutations = 8;
const char* mutation_name(Mutation mutation);

struct MutatedCapture {
  Mutation mutation;
  std::string bytes;
};

// The case `seed` makes of `capture` (a valid capture's bytes).
MutatedCapture mutate(std::string_view capture, uint64_t seed);

}  // namespace perfprof::fuzz
