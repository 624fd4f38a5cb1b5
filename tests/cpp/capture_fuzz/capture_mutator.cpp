#include "capture_fuzz/capture_mutator.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "capture/checksum.h"
#include "capture/capture_format.h"

namespace perfprof::fuzz {
namespace {

using capture_format::kChunkHeaderBytes;
using capture_format::kFileHeaderBytes;

constexpr size_t kKindOffset = 0;  // within a chunk header
constexpr size_t kCrcOffset = 4;
constexpr size_t kSizeOffset = 8;

// Values that sit on the boundaries readers get wrong: zero, one, the signed and unsigned
// extremes, counts just past a chunk, ids just past a table.
constexpr uint64_t kInterestingValues[] = {
    0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
    uint64_t{1} << 32, uint64_t{1} << 40, uint64_t{1} << 48, 0x7fffffffffffffff, 0x8000000000000000,
    0xffffffffffffffff, 0xfffffffffffffffe, 1000, 4096, 1 << 20,
};

template <typename T>
void put(std::string& bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

template <typename T>
T get(std::string_view bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

class Mutator {
 public:
  Mutator(std::string_view capture, uint64_t seed) : bytes_(capture), random_(seed), chunks_(chunks_of(capture)) {}

  MutatedCapture run() {
    const auto mutation = static_cast<Mutation>(below(kMutations));
    const bool payloads = !chunks_.empty();
    switch (payloads ? mutation : Mutation::Random) {
      case Mutation::PayloadBytes: repeat([&] { flip_payload_bytes(); }); break;
      case Mutation::PayloadValues: repeat([&] { write_interesting_value(); }); break;
      case Mutation::PayloadSplice: splice_payload(); break;
      case Mutation::ResizePayload: resize_payload(); break;
      case Mutation::Framing: damage_framing(); break;
      case Mutation::Chunks: rearrange_chunks(); break;
      case Mutation::Truncate: bytes_.resize(below(bytes_.size() + 1)); break;
      case Mutation::Random: random_bytes(); break;
    }
    return {payloads ? mutation : Mutation::Random, std::move(bytes_)};
  }

 private:
  uint64_t below(uint64_t bound) { return bound == 0 ? 0 : std::uniform_int_distribution<uint64_t>(0, bound - 1)(random_); }
  bool one_in(uint64_t n) { return below(n) == 0; }

  // One to four mutations of a kind: most corrupt captures have one bad value, some several.
  template <typename Step>
  void repeat(Step step) {
    const uint64_t times = 1 + below(4);
    for (uint64_t i = 0; i < times; ++i) step();
  }

  // A chunk with a payload, picked at random, its payload changed by `change`, its CRC fixed.
  template <typename Change>
  void change_payload(Change change) {
    std::vector<size_t> with_payload;
    for (size_t i = 0; i < chunks_.size(); ++i) {
      if (chunks_[i].payload_size > 0) with_payload.push_back(i);
    }
    if (with_payload.empty()) return;
    const ChunkSpan& span = chunks_[with_payload[below(with_payload.size())]];
    change(span.offset + kChunkHeaderBytes, span.payload_size);
    fix_checksum(bytes_, span);
  }

  void flip_payload_bytes() {
    change_payload([&](uint64_t begin, uint64_t size) {
      const uint64_t at = begin + below(size);
      if (one_in(2)) {
        bytes_[at] = static_cast<char>(bytes_[at] ^ (1 << below(8)));
      } else {
        bytes_[at] = static_cast<char>(below(256));
      }
    });
  }

  // An interesting value (or one near it) as a 1-, 2-, 4- or 8-byte integer at a payload offset.
  void write_interesting_value() {
    change_payload([&](uint64_t begin, uint64_t size) {
      const size_t width = size_t{1} << below(4);
      if (size < width) return;
      const uint64_t at = begin + below(size - width + 1);
      uint64_t value = kInterestingValues[below(std::size(kInterestingValues))];
      if (one_in(4)) value += below(3) - 1;
      if (one_in(4)) value = ~value + 1;  // its negative
      std::memcpy(bytes_.data() + at, &value, width);
    });
  }

  // Bytes of the payload copied over other bytes of it: a string length read as an id, an id
  // as a count.
  void splice_payload() {
    change_payload([&](uint64_t begin, uint64_t size) {
      const uint64_t from = below(size);
      const uint64_t to = below(size);
      const uint64_t count = std::min({1 + below(16), size - from, size - to});
      std::memmove(bytes_.data() + begin + to, bytes_.data() + begin + from, count);
    });
  }

  // Bytes inserted into or removed from a payload, its size and CRC fixed: every field after
  // the change is read off its alignment.
  void resize_payload() {
    ChunkSpan span = chunks_[below(chunks_.size())];
    const uint64_t payload = span.offset + kChunkHeaderBytes;
    const uint64_t at = payload + below(span.payload_size + 1);
    if (one_in(2) && span.payload_size > 0) {
      const uint64_t count = std::min<uint64_t>(1 + below(8), payload + span.payload_size - at);
      bytes_.erase(at, count);
      span.payload_size -= count;
    } else {
      std::string inserted(1 + below(8), '\0');
      for (char& byte : inserted) byte = static_cast<char>(one_in(2) ? 0 : below(256));
      bytes_.insert(at, inserted);
      span.payload_size += inserted.size();
    }
    put<uint64_t>(bytes_, span.offset + kSizeOffset, span.payload_size);
    fix_checksum(bytes_, span);
  }

  // A chunk header's kind or size, or the file header, changed (CRCs left as they are).
  void damage_framing() {
    const ChunkSpan& span = chunks_[below(chunks_.size())];
    switch (below(4)) {
      case 0: put<uint32_t>(bytes_, span.offset + kKindOffset, static_cast<uint32_t>(below(24))); break;
      case 1: put<uint64_t>(bytes_, span.offset + kSizeOffset, kInterestingValues[below(std::size(kInterestingValues))]); break;
      case 2: put<uint64_t>(bytes_, span.offset + kSizeOffset, span.payload_size + below(64) - 32); break;
      default: bytes_[below(kFileHeaderBytes)] = static_cast<char>(below(256)); break;
    }
  }

  // A chunk dropped, repeated or moved: strings after the events that use them, a window
  // twice, an End in the middle.
  void rearrange_chunks() {
    const ChunkSpan& a = chunks_[below(chunks_.size())];
    const ChunkSpan& b = chunks_[below(chunks_.size())];
    const std::string chunk_a = bytes_.substr(a.offset, kChunkHeaderBytes + a.payload_size);
    switch (below(3)) {
      case 0: bytes_.erase(a.offset, chunk_a.size()); break;
      case 1: bytes_.insert(b.offset, chunk_a); break;
      default:
        if (a.offset < b.offset) {
          bytes_.insert(b.offset + kChunkHeaderBytes + b.payload_size, chunk_a);
          bytes_.erase(a.offset, chunk_a.size());
        }
        break;
    }
  }

  // Random bytes, after a valid file header half of the time (else the header is refused first).
  void random_bytes() {
    std::string random(below(4096), '\0');
    for (char& byte : random) byte = static_cast<char>(below(256));
    if (one_in(2) && bytes_.size() >= kFileHeaderBytes) {
      bytes_ = bytes_.substr(0, kFileHeaderBytes) + random;
    } else {
      bytes_ = random;
    }
  }

  std::string bytes_;
  std::mt19937_64 random_;
  std::vector<ChunkSpan> chunks_;
};

}  // namespace

std::vector<ChunkSpan> chunks_of(std::string_view bytes) {
  std::vector<ChunkSpan> chunks;
  uint64_t offset = kFileHeaderBytes;
  while (offset + kChunkHeaderBytes <= bytes.size()) {
    const ChunkSpan span{offset, get<uint32_t>(bytes, offset + kKindOffset), get<uint64_t>(bytes, offset + kSizeOffset)};
    if (span.payload_size > bytes.size() - offset - kChunkHeaderBytes) break;
    chunks.push_back(span);
    offset += kChunkHeaderBytes + span.payload_size;
  }
  return chunks;
}

void fix_checksum(std::string& bytes, const ChunkSpan& span) {
  const std::string_view payload = std::string_view(bytes).substr(span.offset + kChunkHeaderBytes, span.payload_size);
  put<uint32_t>(bytes, span.offset + kCrcOffset, crc32_of(payload));
}

const char* mutation_name(Mutation mutation) {
  switch (mutation) {
    case Mutation::PayloadBytes: return "payload bytes";
    case Mutation::PayloadValues: return "payload values";
    case Mutation::PayloadSplice: return "payload splice";
    case Mutation::ResizePayload: return "payload resized";
    case Mutation::Framing: return "framing";
    case Mutation::Chunks: return "chunks rearranged";
    case Mutation::Truncate: return "truncated";
    case Mutation::Random: return "random bytes";
  }
  return "?";
}

MutatedCapture mutate(std::string_view capture, uint64_t seed) { return Mutator(capture, seed).run(); }

}  // namespace perfprof::fuzz
