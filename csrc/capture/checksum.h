#pragma once
// The CRC-32 (zlib's) each capture chunk carries of its payload.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace perfprof {

// `crc` continues a checksum over earlier bytes (0: none yet).
inline uint32_t crc32_of(std::string_view bytes, uint32_t crc = 0) {
  while (!bytes.empty()) {  // zlib takes a uInt length: large payloads go in pieces
    const auto piece = static_cast<uInt>(std::min<size_t>(bytes.size(), UINT32_MAX));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), piece);
    bytes.remove_prefix(piece);
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace perfprof
