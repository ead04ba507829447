#include "viz/memory_chart.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::viz {
namespace {

using ::testing::HasSubstr;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MemoryChartTest, OneStepLinePerCurveWithPeakAndCapacity) {
  const std::vector<MemoryCurve> curves = {
      {"first <stage>", {{0, 30}, {0.1, 40}, {0.4, 52.5}, {0.9, 30}}},
      {"last stage", {{0, 20}, {0.5, 25}, {0.6, 20}}}};
  const std::string svg = MemoryCurveSvg(curves, 80, 1.0);
  EXPECT_THAT(svg, HasSubstr("<svg id=\"memory-curve\""));
  EXPECT_EQ(Count(svg, "<path "), 2u);
  EXPECT_THAT(svg, HasSubstr("first &lt;stage&gt;: peak 52.5 GiB"));
  EXPECT_THAT(svg, HasSubstr("last stage: peak 25.0 GiB"));
  EXPECT_THAT(svg, HasSubstr("capacity 80.0 GiB"));
  EXPECT_EQ(svg, MemoryCurveSvg(curves, 80, 1.0));
}

TEST(MemoryChartTest, LongCurvesKeepTheirPeakInFewSteps) {
  MemoryCurve c{"long", {}};
  for (int i = 0; i < 100000; ++i) c.points.push_back({i * 1e-5, i == 54321 ? 70.0 : 10.0 + i % 7});
  const std::string svg = MemoryCurveSvg({c}, 80, 1.0);
  EXPECT_LE(Count(svg, " V"), static_cast<size_t>(kMaxSteps));
  EXPECT_THAT(svg, HasSubstr("long: peak 70.0 GiB"));
  EXPECT_LT(svg.size(), 40000u);
}

}  // namespace
}  // namespace clustersim::viz
