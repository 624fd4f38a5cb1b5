// The memory timeline HTML page: bands and colours, step shape, legend text, axis ticks, the
// per-column reduction of large timelines, escaping and the empty page.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "export/memory_timeline_html.h"

namespace perfprof {
namespace {

using memory::Category;
using memory::CategoryBytes;
using memory::index_of;
using memory::MemoryTimeline;

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;

CategoryBytes bytes_of(std::initializer_list<std::pair<Category, int64_t>> entries) {
  CategoryBytes bytes{};
  for (const auto& [category, value] : entries) bytes[index_of(category)] = value;
  return bytes;
}

struct Band {
  std::string fill;
  std::string name;
  std::string d;
};

std::vector<Band> bands_of(const std::string& html) {
  static const std::regex kBand(
      R"re(<path class="band" fill="([a-z]+)" fill-opacity="0\.7" d="([^"]*)"><title>([A-Z_]+)</title></path>)re");
  std::vector<Band> bands;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kBand); it != std::sregex_iterator(); ++it) {
    bands.push_back({(*it)[1], (*it)[3], (*it)[2]});
  }
  return bands;
}

// The vertices of an SVG path made of M, H, V and Z commands.
struct Polyline {
  std::vector<double> x;
  std::vector<double> y;
  size_t numbers = 0;
};

Polyline parse_path(const std::string& d) {
  Polyline line;
  double x = 0;
  double y = 0;
  char command = 0;
  int coordinate = 0;  // of the M command: 0 for x, 1 for y
  const char* at = d.c_str();
  while (*at) {
    if (std::isalpha(static_cast<unsigned char>(*at))) {
      command = *at++;
      coordinate = 0;
      continue;
    }
    if (*at == ' ') {
      ++at;
      continue;
    }
    char* end = nullptr;
    const double value = std::strtod(at, &end);
    EXPECT_NE(end, at) << "bad path near: " << at;
    if (end == at) break;
    at = end;
    ++line.numbers;
    if (command == 'M' && coordinate++ == 0) {
      x = value;
      continue;
    }
    if (command == 'H') x = value;
    else y = value;
    line.x.push_back(x);
    line.y.push_back(y);
  }
  return line;
}

// The y of the tick labelled `label` on the memory axis; fails the test when there is none.
double y_tick(const std::string& html, const std::string& label) {
  const std::regex tick("<text class=\"ytick\" x=\"[^\"]*\" y=\"([^\"]*)\"[^>]*>" + label + "</text>");
  std::smatch match;
  EXPECT_TRUE(std::regex_search(html, match, tick)) << "no y tick " << label;
  return match.empty() ? -1 : std::stod(match[1]);
}

std::vector<std::string> tick_labels(const std::string& html, const std::string& klass) {
  const std::regex tick("<text class=\"" + klass + "\"[^>]*>([^<]*)</text>");
  std::vector<std::string> labels;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tick); it != std::sregex_iterator(); ++it) {
    labels.push_back((*it)[1]);
  }
  return labels;
}

// Two points 2 ms apart: PARAMETER 1 MiB then 2 MiB, OPTIMIZER_STATE 1 MiB then nothing.
MemoryTimeline two_points() {
  MemoryTimeline timeline;
  timeline.device = "cuda:0";
  timeline.times_us = {1'700'000'000'000'000, 1'700'000'000'002'000};
  timeline.bytes = {bytes_of({{Category::kParameter, kMiB}, {Category::kOptimizerState, kMiB}}),
                    bytes_of({{Category::kParameter, 2 * kMiB}})};
  timeline.max_allocated = 2 * kMiB;
  timeline.max_reserved = 4 * kMiB;
  return timeline;
}

TEST(MemoryTimelineHtml, OneBandPerCategoryInTorchColoursStackedInEnumOrder) {
  const std::string html = memory_timeline_html(two_points(), "run");
  const std::vector<Band> bands = bands_of(html);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"PARAMETER", "darkgreen"}, {"OPTIMIZER_STATE", "goldenrod"}, {"INPUT", "black"},
      {"TEMPORARY", "mediumpurple"}, {"ACTIVATION", "red"}, {"GRADIENT", "mediumblue"},
      {"AUTOGRAD_DETAIL", "royalblue"}, {"UNKNOWN", "grey"}};
  ASSERT_EQ(bands.size(), expected.size());
  for (size_t k = 0; k < bands.size(); ++k) {
    EXPECT_EQ(bands[k].name, expected[k].first);
    EXPECT_EQ(bands[k].fill, expected[k].second) << bands[k].name;
  }
}

TEST(MemoryTimelineHtml, DrawsTheStepFunctionAsSteps) {
  // Plot x from 80 to 1360; y axis 0..2 MiB mapped to 456..16, so 1 MiB is at y 236.
  const std::vector<Band> bands = bands_of(memory_timeline_html(two_points(), "run"));
  ASSERT_EQ(bands.size(), 8u);
  // 1 MiB held flat until the second point, then straight up to 2 MiB: a step, not a slope.
  EXPECT_EQ(bands[0].d, "M80 236H1360V16V456H80Z");
  // Stacked on PARAMETER: from 1 MiB to 2 MiB over the first step.
  EXPECT_EQ(bands[1].d, "M80 16H1360V236H80Z");
  // Empty categories are flat on the top of the stack.
  EXPECT_EQ(bands[7].d, "M80 16H1360H80Z");
}

TEST(MemoryTimelineHtml, AxesHaveUnitsAndNiceTicks) {
  const std::string html = memory_timeline_html(two_points(), "run");
  EXPECT_NE(html.find(">Time (ms)</text>"), std::string::npos);
  EXPECT_NE(html.find(">Memory (MiB)</text>"), std::string::npos);
  EXPECT_EQ(tick_labels(html, "ytick"), (std::vector<std::string>{"0.0", "0.5", "1.0", "1.5", "2.0"}));
  EXPECT_EQ(tick_labels(html, "xtick"), (std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0", "1.2",
                                                                  "1.4", "1.6", "1.8", "2.0"}));
  EXPECT_DOUBLE_EQ(y_tick(html, "0.0"), 456);
  EXPECT_DOUBLE_EQ(y_tick(html, "2.0"), 16);
}

TEST(MemoryTimelineHtml, LegendShowsPeaksAndMaximaInHumanUnits) {
  MemoryTimeline timeline;
  timeline.device = "cuda:3";
  timeline.times_us = {0, 10, 20};
  timeline.bytes = {bytes_of({{Category::kParameter, 2 * kMiB}, {Category::kActivation, 5 * kMiB}}),
                    bytes_of({{Category::kParameter, 2 * kMiB}, {Category::kActivation, 12 * kMiB + kMiB / 2},
                              {Category::kGradient, 512 * kKiB}}),
                    bytes_of({{Category::kGradient, 3 * kGiB / 2}, {Category::kUnknown, 100}})};
  timeline.max_allocated = static_cast<int64_t>(1.23 * kGiB);
  timeline.max_reserved = 12 * kMiB + kMiB / 2;
  const std::string html = memory_timeline_html(timeline, "step 3");

  const auto row = [](const std::string& name, const std::string& peak) {
    return "<td>" + name + "</td><td class=\"num\">" + peak + "</td>";
  };
  EXPECT_NE(html.find(row("PARAMETER", "2.00 MiB")), std::string::npos) << html;
  EXPECT_NE(html.find(row("ACTIVATION", "12.5 MiB")), std::string::npos);
  EXPECT_NE(html.find(row("GRADIENT", "1.50 GiB")), std::string::npos);
  EXPECT_NE(html.find(row("UNKNOWN", "100 B")), std::string::npos);
  EXPECT_NE(html.find(row("INPUT", "0 B")), std::string::npos);
  // The chart's top (the third point: 1.5 GiB + 100 B) and the allocator's own maxima, each named
  // for what it counts, readable and to the byte.
  EXPECT_NE(html.find("Peak total of the categories (the chart's top): 1.50 GiB (1610612836 bytes)"),
            std::string::npos);
  EXPECT_NE(html.find("Allocator's max allocated (torch's own count; for the CPU, only of memory allocated while "
                      "recording): 1.23 GiB (1320702443 bytes)"),
            std::string::npos);
  EXPECT_NE(html.find("Allocator's max reserved: 12.5 MiB (13107200 bytes)"), std::string::npos);
  EXPECT_EQ(html.find("Max memory allocated"), std::string::npos);  // torch's label, ambiguous beside the chart
  EXPECT_NE(html.find("cuda:3"), std::string::npos);
  EXPECT_NE(html.find("<h1>step 3</h1>"), std::string::npos);
  // The highest stack is 1.5 GiB: the axis is in GiB.
  EXPECT_NE(html.find(">Memory (GiB)</text>"), std::string::npos);
  // Legend swatches use the band colours.
  EXPECT_NE(html.find("background:darkgreen;opacity:0.7"), std::string::npos);
}

TEST(MemoryTimelineHtml, LargeTimelinesAreReducedPerColumnKeepingThePeak) {
  constexpr size_t kPoints = 1'000'000;
  constexpr size_t kSpike = 543'210;
  MemoryTimeline timeline;
  timeline.device = "cuda:0";
  timeline.times_us.resize(kPoints);
  timeline.bytes.assign(kPoints, bytes_of({{Category::kParameter, kMiB}}));
  for (size_t i = 0; i < kPoints; ++i) timeline.times_us[i] = static_cast<int64_t>(i);
  timeline.bytes[kSpike][index_of(Category::kActivation)] = 9 * kMiB;  // one point, 1 µs of 1 s
  const std::string html = memory_timeline_html(timeline, "big");

  EXPECT_LT(html.size(), 1'000'000u);
  const std::vector<Band> bands = bands_of(html);
  ASSERT_EQ(bands.size(), 8u);
  size_t numbers = 0;
  for (const Band& band : bands) numbers += parse_path(band.d).numbers;
  EXPECT_LT(numbers, kPoints / 10);

  // The axis goes to 10 MiB; the top of the stack reaches it at the spike and is at 1 MiB elsewhere.
  const double y0 = y_tick(html, "0");
  const double y10 = y_tick(html, "10");
  const double y1 = y0 + (y10 - y0) / 10;
  const Polyline top = parse_path(bands.back().d);
  EXPECT_DOUBLE_EQ(*std::min_element(top.y.begin(), top.y.end()), y10);
  std::set<double> levels(top.y.begin(), top.y.end());
  EXPECT_EQ(levels, (std::set<double>{y10, y1}));
  // The spike stands where it happened, about 54% of the way along.
  const Polyline activation = parse_path(bands[index_of(Category::kActivation)].d);
  size_t at_peak = 0;
  for (size_t i = 0; i < activation.y.size(); ++i) {
    if (activation.y[i] != y10) continue;
    ++at_peak;
    EXPECT_NEAR(activation.x[i], 80 + 0.54321 * 1280, 2);
  }
  EXPECT_GE(at_peak, 2u);  // a column wide
}

TEST(MemoryTimelineHtml, SmallTimelinesKeepEveryPoint) {
  MemoryTimeline timeline;
  timeline.device = "cpu";
  for (int i = 0; i < 1000; ++i) {
    timeline.times_us.push_back(i);
    timeline.bytes.push_back(bytes_of({{Category::kTemporary, (i % 2 + 1) * kKiB}}));
  }
  const std::vector<Band> bands = bands_of(memory_timeline_html(timeline, "small"));
  ASSERT_EQ(bands.size(), 8u);
  const Polyline temporary = parse_path(bands[index_of(Category::kTemporary)].d);
  // Each point is a horizontal then a vertical segment along the top.
  EXPECT_GE(temporary.x.size(), 2u * 999);
}

TEST(MemoryTimelineHtml, EscapesTitleAndDevice) {
  MemoryTimeline timeline = two_points();
  timeline.device = "cuda:0 <b>&";
  const std::string html = memory_timeline_html(timeline, "<script>alert('x')</script> \"q\"");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("<h1>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &quot;q&quot;</h1>"), std::string::npos);
  EXPECT_NE(html.find("<title>&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("cuda:0 &lt;b&gt;&amp;"), std::string::npos);
}

TEST(MemoryTimelineHtml, PageIsSelfContained) {
  const std::string html = memory_timeline_html(two_points(), "run");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</svg>"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(MemoryTimelineHtml, EmptyTimelineSaysThereIsNoData) {
  MemoryTimeline timeline;
  timeline.device = "cuda:1";
  const std::string html = memory_timeline_html(timeline, "nothing");
  EXPECT_NE(html.find("No memory data for device cuda:1."), std::string::npos);
  EXPECT_NE(html.find("<h1>nothing</h1>"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
}

TEST(MemoryTimelineHtml, SinglePointAndAllZeroStillDrawAValidChart) {
  MemoryTimeline timeline;
  timeline.device = "cpu";
  timeline.times_us = {5};
  timeline.bytes = {CategoryBytes{}};
  const std::string html = memory_timeline_html(timeline, "one");
  EXPECT_EQ(bands_of(html).size(), 8u);
  EXPECT_NE(html.find(">Memory (B)</text>"), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace perfprof
