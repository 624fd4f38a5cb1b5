#pragma once
// The capture file's framing (docs/formats/capture.md): a file header, then chunks, each a
// header (kind, payload size, CRC-32 of the payload) and its payload. A capture cut short (the
// process killed while writing) is read up to its last whole chunk; only a complete one ends
// with an End chunk.
#include <cstddef>
#include <cstdint>

namespace perfprof::capture_format {

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "perfprof's capture format is little-endian; this host is not"
#endif

inline constexpr char kMagic[8] = {'P', 'P', 'C', 'A', 'P', 'T', 'U', 'R'};
// A reader reads every capture of its major version; a minor version adds chunk kinds, which
// older readers skip, or meaning to bytes that were zero (docs/formats/capture.md lists them).
inline constexpr uint16_t kVersionMajor = 2;
// 2.1: step numbers in a step's begin event; 2.2: a counter event's metric; 2.3: KernelMetrics.
inline constexpr uint16_t kVersionMinor = 3;
inline constexpr size_t kFileHeaderBytes = 16;   // magic, major, minor, header size (u32)
inline constexpr size_t kChunkHeaderBytes = 16;  // kind (u32), CRC-32 (u32), payload size (u64)

enum class ChunkKind : uint32_t {
  Process = 1,            // ProcessInfo
  Window = 2,             // CollectionWindow
  Strings = 3,            // (id, text) pairs: the strings the events use
  Thread = 4,             // a recording thread: buffer index, OS id, name
  HostEvents = 5,         // a recording thread's raw events (buffer index, then 32-byte records)
  CompletedRanges = 6,
  MemoryEvents = 7,
  ObservedTensors = 8,
  Losses = 9,             // dropped events, torch results that could not be read (counts add up)
  OtherThreads = 10,      // names of threads without a buffer
  GpuActivities = 11,
  ApiCalls = 12,
  ExternalIds = 13,       // CUPTI correlation id -> host range id
  GpuDevices = 14,
  StreamAnnotations = 15,
  GpuStatus = 16,         // GPU collection ran; records CUPTI dropped (counts add up)
  End = 17,               // the capture is complete
  ArgSets = 18,           // (id, argument set) pairs: the typed args the events use
  Metadata = 19,          // run metadata (key, JSON text, added by the user or not); repeated chunks append
  KernelMetrics = 20,     // per-kernel hardware metrics: columns, counts, a row per measured kernel
};

}  // namespace perfprof::capture_format
