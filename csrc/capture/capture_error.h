#pragma once
#include <stdexcept>

namespace perfprof {

// Bytes that are not a capture this perfprof reads, or a chunk whose payload does not decode.
class CaptureFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace perfprof
