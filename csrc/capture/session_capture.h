#pragma once
// The capture of a session that has just stopped: what the recorder holds and, when GPU activity
// was collected, what CUPTI handed over; completed from its capture file when it was streamed.
#include "capture/capture.h"
#include "capture/capture_stream.h"

namespace perfprof {

// `stream`: the session's capture file, or null when the session was held in memory.
Capture capture_session(CaptureStream* stream, bool with_gpu, const CollectionWindow& window);

}  // namespace perfprof
