#include "export/memory_timeline_html.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace perfprof {
namespace {

using memory::CategoryBytes;
using memory::kNumCategories;
using memory::MemoryTimeline;

// Layout in pixels; the page fits a 1400 x 900 window.
constexpr int kPlotWidth = 1280;
constexpr int kPlotHeight = 440;
constexpr int kLeft = 80;
constexpr int kTop = 16;
constexpr int kRight = 20;
constexpr int kBottom = 64;
constexpr int kSvgWidth = kLeft + kPlotWidth + kRight;
constexpr int kSvgHeight = kTop + kPlotHeight + kBottom;
constexpr double kPlotBottom = kTop + kPlotHeight;
constexpr size_t kMaxPoints = kPlotWidth * 3 / 2;

// matplotlib colour names as torch.profiler's plot uses them; SVG and CSS know them too.
constexpr std::array<std::string_view, kNumCategories> kColors = {
    "darkgreen", "goldenrod", "black", "mediumpurple", "red", "mediumblue", "royalblue", "grey"};
constexpr std::string_view kOpacity = "0.7";

constexpr std::string_view kStyle = R"(
body { font-family: sans-serif; margin: 10px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
p { margin: 2px 0; }
svg text { font-size: 12px; fill: #222; }
.grid { stroke: #ddd; stroke-width: 1; }
.axis { stroke: #222; stroke-width: 1; fill: none; }
.summary { display: flex; gap: 48px; align-items: flex-start; margin-top: 4px; font-size: 13px; }
.legend td { padding: 1px 8px 1px 0; }
.legend .num { text-align: right; font-variant-numeric: tabular-nums; }
.swatch { display: inline-block; width: 14px; height: 14px; vertical-align: middle; }
)";

template <typename... Args>
void append(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
}

// Coordinates to a tenth of a pixel, without a trailing ".0": finer is invisible and costs size.
int64_t tenths(double value) { return std::llround(value * 10); }

void append_tenths(std::string& out, int64_t value) {
  if (value % 10 == 0) append(out, "{}", value / 10);
  else append(out, "{:.1f}", static_cast<double>(value) / 10);
}

void append_coord(std::string& out, double value) { append_tenths(out, tenths(value)); }

struct Unit {
  std::string_view name;
  double bytes;
};

Unit unit_for(int64_t bytes) {
  static constexpr std::array<std::string_view, 5> kNames = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t i = 0;
  double scale = 1;
  while (i + 1 < kNames.size() && static_cast<double>(bytes) >= scale * 1024) {
    scale *= 1024;
    ++i;
  }
  return {kNames[i], scale};
}

// Three significant digits: "1.23 GiB", "12.5 MiB", "512 KiB".
std::string human_bytes(int64_t bytes) {
  const Unit unit = unit_for(bytes);
  if (unit.bytes == 1) return fmt::format("{} B", bytes);
  const double value = static_cast<double>(bytes) / unit.bytes;
  const int decimals = value < 10 ? 2 : value < 100 ? 1 : 0;
  return fmt::format("{:.{}f} {}", value, decimals, unit.name);
}

// The smallest 1, 2 or 5 times a power of ten that is at least `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double residual = raw / magnitude;
  constexpr double kSlack = 1e-9;  // so that 0.3 / 0.1 counts as 3, not 3.0000000000000004
  const double factor = residual <= 1 + kSlack ? 1 : residual <= 2 + kSlack ? 2 : residual <= 5 + kSlack ? 5 : 10;
  return factor * magnitude;
}

int decimals_for(double step) {
  return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
}

struct YAxis {
  Unit unit;
  double step;    // in units
  int intervals;  // ticks are 0, step, ..., intervals * step (the top of the plot)

  double top_bytes() const { return step * intervals * unit.bytes; }
  double y(int64_t bytes) const { return kPlotBottom - kPlotHeight * (static_cast<double>(bytes) / top_bytes()); }
};

YAxis y_axis_for(int64_t peak) {
  const Unit unit = unit_for(peak);
  const double peak_units = static_cast<double>(peak) / unit.bytes;
  const double step = nice_step(peak_units / 5);
  const int intervals = std::max(1, static_cast<int>(std::ceil(peak_units / step - 1e-9)));
  return {unit, step, intervals};
}

class TimeScale {
 public:
  TimeScale(int64_t first_us, int64_t last_us)
      : first_us_(first_us), span_us_(static_cast<double>(std::max<int64_t>(last_us - first_us, 1))) {}

  double x(int64_t t_us) const { return kLeft + fraction(t_us) * kPlotWidth; }
  size_t column(int64_t t_us) const {
    const double column = std::floor(fraction(t_us) * kPlotWidth);
    return static_cast<size_t>(std::clamp(column, 0.0, static_cast<double>(kPlotWidth - 1)));
  }
  double span_ms() const { return span_us_ / 1000; }
  double x_of_ms(double ms) const { return kLeft + ms * 1000 / span_us_ * kPlotWidth; }

 private:
  double fraction(int64_t t_us) const { return static_cast<double>(t_us - first_us_) / span_us_; }

  int64_t first_us_;
  double span_us_;
};

// Stacked boundaries: top[k] is the bytes of categories 0..k together.
using Stack = std::array<int64_t, kNumCategories>;

Stack stacked(const CategoryBytes& bytes) {
  Stack top{};
  int64_t sum = 0;
  for (size_t k = 0; k < kNumCategories; ++k) top[k] = sum += bytes[k];
  return top;
}

// What is drawn: step i holds tops[i] from x[i] to x[i + 1], the last one to end_x.
struct Steps {
  std::vector<double> x;
  std::vector<Stack> tops;
  double end_x = kLeft;

  void add(double at, const Stack& top) {
    x.push_back(at);
    tops.push_back(top);
  }
};

Steps every_point(const MemoryTimeline& timeline, size_t n, const TimeScale& time) {
  Steps steps;
  steps.x.reserve(n);
  steps.tops.reserve(n);
  for (size_t i = 0; i < n; ++i) steps.add(time.x(timeline.times_us[i]), stacked(timeline.bytes[i]));
  steps.end_x = steps.x.back();
  return steps;
}

// One step per pixel column: each stacked boundary's max over it (points and carried-in value), so no peak is lost.
Steps per_column(const MemoryTimeline& timeline, size_t n, const TimeScale& time) {
  Steps steps;
  size_t column = 0;
  Stack column_max{};
  Stack last{};
  for (size_t i = 0; i < n; ++i) {
    const size_t at = time.column(timeline.times_us[i]);
    const Stack top = stacked(timeline.bytes[i]);
    if (i == 0 || at != column) {
      if (i > 0) {
        steps.add(kLeft + static_cast<double>(column), column_max);
        // Columns without a point hold the last value.
        if (at > column + 1) steps.add(kLeft + static_cast<double>(column + 1), last);
      }
      column = at;
      column_max = i == 0 ? top : last;
    }
    for (size_t k = 0; k < kNumCategories; ++k) column_max[k] = std::max(column_max[k], top[k]);
    last = top;
  }
  steps.add(kLeft + static_cast<double>(column), column_max);
  steps.end_x = kLeft + static_cast<double>(column + 1);
  return steps;
}

// Appends SVG path commands, leaving out moves that go nowhere at the output's resolution.
class PathWriter {
 public:
  explicit PathWriter(std::string& out) : out_(out) {}

  void move(double x, double y) {
    x_ = tenths(x);
    y_ = tenths(y);
    out_ += 'M';
    append_tenths(out_, x_);
    out_ += ' ';
    append_tenths(out_, y_);
  }
  void horizontal(double x) { line('H', x_, x); }
  void vertical(double y) { line('V', y_, y); }
  void close() { out_ += 'Z'; }

 private:
  void line(char command, int64_t& current, double to) {
    const int64_t target = tenths(to);
    if (target == current) return;
    current = target;
    out_ += command;
    append_tenths(out_, target);
  }

  std::string& out_;
  int64_t x_ = 0;
  int64_t y_ = 0;
};

// The band of category k: along its top boundary as steps, then back along the one below.
void append_band_path(std::string& out, const Steps& steps, size_t k, const YAxis& axis) {
  const auto upper = [&](size_t i) { return axis.y(steps.tops[i][k]); };
  const auto lower = [&](size_t i) { return k == 0 ? kPlotBottom : axis.y(steps.tops[i][k - 1]); };
  const size_t n = steps.x.size();
  PathWriter path(out);
  path.move(steps.x[0], upper(0));
  for (size_t i = 1; i < n; ++i) {
    path.horizontal(steps.x[i]);
    path.vertical(upper(i));
  }
  path.horizontal(steps.end_x);
  path.vertical(lower(n - 1));
  for (size_t i = n - 1; i > 0; --i) {
    path.horizontal(steps.x[i]);
    path.vertical(lower(i - 1));
  }
  path.horizontal(steps.x[0]);
  path.close();
}

void append_bands(std::string& out, const Steps& steps, const YAxis& axis) {
  for (size_t k = 0; k < kNumCategories; ++k) {
    append(out, "<path class=\"band\" fill=\"{}\" fill-opacity=\"{}\" d=\"", kColors[k], kOpacity);
    append_band_path(out, steps, k, axis);
    append(out, "\"><title>{}</title></path>\n", memory::category_name(static_cast<memory::Category>(k)));
  }
}

void append_y_ticks(std::string& out, const YAxis& axis) {
  const int decimals = decimals_for(axis.step);
  for (int i = 0; i <= axis.intervals; ++i) {
    const double y = kPlotBottom - kPlotHeight * static_cast<double>(i) / axis.intervals;
    out += "<line class=\"grid\" x1=\"";
    append_coord(out, kLeft);
    out += "\" y1=\"";
    append_coord(out, y);
    out += "\" x2=\"";
    append_coord(out, kLeft + kPlotWidth);
    out += "\" y2=\"";
    append_coord(out, y);
    out += "\"/>\n<text class=\"ytick\" x=\"";
    append_coord(out, kLeft - 6);
    out += "\" y=\"";
    append_coord(out, y);
    append(out, "\" dy=\"0.32em\" text-anchor=\"end\">{:.{}f}</text>\n", axis.step * i, decimals);
  }
}

void append_x_ticks(std::string& out, const TimeScale& time) {
  const double step = nice_step(time.span_ms() / 10);
  const int decimals = decimals_for(step);
  for (int i = 0; step * i <= time.span_ms() * (1 + 1e-9); ++i) {
    const double x = time.x_of_ms(step * i);
    out += "<line class=\"grid\" x1=\"";
    append_coord(out, x);
    out += "\" y1=\"";
    append_coord(out, kTop);
    out += "\" x2=\"";
    append_coord(out, x);
    out += "\" y2=\"";
    append_coord(out, kPlotBottom);
    out += "\"/>\n<text class=\"xtick\" x=\"";
    append_coord(out, x);
    out += "\" y=\"";
    append_coord(out, kPlotBottom + 18);
    append(out, "\" text-anchor=\"middle\">{:.{}f}</text>\n", step * i, decimals);
  }
}

void append_svg(std::string& out, const Steps& steps, const YAxis& axis, const TimeScale& time) {
  append(out,
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
         "role=\"img\">\n",
         kSvgWidth, kSvgHeight);
  append_y_ticks(out, axis);
  append_x_ticks(out, time);
  append_bands(out, steps, axis);
  append(out, "<path class=\"axis\" d=\"M{0} {1}V{2}H{3}\"/>\n", kLeft, kTop, kPlotBottom, kLeft + kPlotWidth);
  append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">Time (ms)</text>\n", kLeft + kPlotWidth / 2,
         kSvgHeight - 20);
  append(out, "<text transform=\"translate(22 {}) rotate(-90)\" text-anchor=\"middle\">Memory ({})</text>\n",
         kTop + kPlotHeight / 2, axis.unit.name);
  out += "</svg>\n";
}

struct Peaks {
  CategoryBytes per_category{};
  int64_t stacked = 0;  // the highest total: the top of the plot
};

Peaks peaks_of(const MemoryTimeline& timeline, size_t n) {
  Peaks peaks;
  for (size_t i = 0; i < n; ++i) {
    int64_t total = 0;
    for (size_t k = 0; k < kNumCategories; ++k) {
      peaks.per_category[k] = std::max(peaks.per_category[k], timeline.bytes[i][k]);
      total += timeline.bytes[i][k];
    }
    peaks.stacked = std::max(peaks.stacked, total);
  }
  return peaks;
}

// A figure a reader may check against the CSVs and the database: readable, then to the byte.
std::string bytes_and_exact(int64_t bytes) { return fmt::format("{} ({} bytes)", human_bytes(bytes), bytes); }

// Two different quantities, each named for what it counts (docs/memory.md says why they differ):
// the peak of the categorised total is the chart's top and memory_peaks' TOTAL; the allocator's
// maxima are its own running counts (memory_record.csv), which torch's plot calls "Max memory
// allocated" and which, for the CPU, count only memory allocated while recording (in any session).
void append_legend(std::string& out, const MemoryTimeline& timeline, const Peaks& peaks) {
  out += "<div class=\"summary\">\n<table class=\"legend\">\n<tr><th></th><th>Category</th><th>Peak</th></tr>\n";
  for (size_t k = 0; k < kNumCategories; ++k) {
    append(out,
           "<tr><td><span class=\"swatch\" style=\"background:{};opacity:{}\"></span></td><td>{}</td>"
           "<td class=\"num\">{}</td></tr>\n",
           kColors[k], kOpacity, memory::category_name(static_cast<memory::Category>(k)),
           human_bytes(peaks.per_category[k]));
  }
  append(out,
         "</table>\n<div class=\"totals\">\n"
         "<p class=\"peak\">Peak total of the categories (the chart's top): {}</p>\n"
         "<p class=\"allocator\">Allocator's max allocated (torch's own count; for the CPU, only of memory "
         "allocated while recording): {}</p>\n<p class=\"allocator\">Allocator's max reserved: {}</p>\n</div>\n</div>\n",
         bytes_and_exact(peaks.stacked), bytes_and_exact(timeline.max_allocated),
         bytes_and_exact(timeline.max_reserved));
}

void append_head(std::string& out, const MemoryTimeline& timeline, std::string_view title) {
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  append_escaped(out, title);
  append(out, "</title>\n<style>{}</style>\n</head>\n<body>\n<h1>", kStyle);
  append_escaped(out, title);
  out += "</h1>\n<p class=\"device\">Device: ";
  append_escaped(out, timeline.device);
  out += "</p>\n";
}

}  // namespace

std::string memory_timeline_html(const memory::MemoryTimeline& timeline, std::string_view title) {
  std::string out;
  append_head(out, timeline, title);
  const size_t n = std::min(timeline.times_us.size(), timeline.bytes.size());
  if (n == 0) {
    out += "<p class=\"empty\">No memory data for device ";
    append_escaped(out, timeline.device);
    out += ".</p>\n</body>\n</html>\n";
    return out;
  }
  const TimeScale time(timeline.times_us.front(), timeline.times_us[n - 1]);
  const Peaks peaks = peaks_of(timeline, n);
  const Steps steps = n > kMaxPoints ? per_column(timeline, n, time) : every_point(timeline, n, time);
  append_svg(out, steps, y_axis_for(peaks.stacked), time);
  append_legend(out, timeline, peaks);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace perfprof
