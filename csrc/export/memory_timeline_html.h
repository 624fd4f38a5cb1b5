#pragma once
// The memory timeline as a self-contained HTML page: an inline SVG stacked-area chart of bytes per
// category over time (the plot torch.profiler's export_memory_timeline draws), with its legend.
// Needs no network and no JavaScript.
#include <string>
#include <string_view>

#include "memory/timeline.h"

namespace perfprof {

// The whole page. Bands are stacked in Category order (PARAMETER at the bottom) in
// torch.profiler's colours and drawn as steps. Timelines with more points than the plot has pixel
// columns (×1.5) are reduced per column, keeping every peak; the page stays under ~1 MB whatever
// the input. Only the first min(times_us, bytes) points are used; with none, the page says there
// is no memory data for the device.
std::string memory_timeline_html(const memory::MemoryTimeline& timeline, std::string_view title);

}  // namespace perfprof
