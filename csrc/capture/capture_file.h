#pragma once
// Captures to and from their file format (docs/formats/capture.md).
#include <string>
#include <string_view>

#include "capture/capture.h"
#include "capture/capture_error.h"
#include "capture/sink.h"

namespace perfprof {

// Writes `capture` to `sink` as one complete capture. False when the sink failed (its error()
// says why); what reached it before is a capture cut short, still readable up to there.
bool write_capture(const Capture& capture, Sink& sink);

struct CaptureReading {
  Capture capture;
  bool complete = false;  // it ends with its End chunk: nothing was cut
  std::string problem;    // why reading stopped before the end of a complete capture; empty if it did not
};

// Reads a capture, or what a cut one holds up to its last whole chunk. Throws CaptureFormatError
// when `bytes` is not a capture of a version this perfprof reads.
CaptureReading read_capture(std::string_view bytes);

// The same from a file; also throws std::runtime_error when it cannot be read.
CaptureReading read_capture_file(const std::string& path);

}  // namespace perfprof
