// File: viz/bar_charts.h
//
// Horizontal stacked bars as inline SVG, for the report's step-time breakdown
// (one bar: compute, exposed communication by kind, bubble, optimizer, ...)
// and memory breakdown (one bar per stage or one for every GPU, against the
// GPU's capacity drawn as a dashed marker line). Below the bars, a legend
// lists each segment of the first bar with its value and share of that bar.
//
// Example:
//   StackedBars chart;
//   chart.id = "breakdown";
//   chart.unit = "s";
//   chart.rows.push_back({"step", {{"compute", 1.1, "#3f6fa8"}, {"bubble", 0.2, "#ccc"}}});
//   std::string svg = StackedBarsSvg(chart);   // "<svg id=\"breakdown\" ..."
#ifndef CLUSTERSIM_VIZ_BAR_CHARTS_H_
#define CLUSTERSIM_VIZ_BAR_CHARTS_H_

#include <string>
#include <vector>

namespace clustersim::viz {

struct BarSegment {
  std::string label;
  double value = 0;   // in the chart's unit; segments <= 0 are not drawn
  std::string color;  // CSS colour, e.g. "#3f6fa8"
};

struct BarRow {
  std::string label;  // "step", "stage 0", "every GPU"
  std::vector<BarSegment> segments;
  std::string note;   // drawn after the bar, e.g. "62.3 GiB: fits"
};

struct StackedBars {
  std::string id;      // the <svg> element id
  std::string unit;    // "s", "GiB"
  int decimals = 2;    // digits printed for values
  std::vector<BarRow> rows;
  double marker = -1;  // a dashed vertical line at this value (e.g. capacity); < 0: none
  std::string marker_label;
};

// A round step (1, 2 or 5 x 10^k) for about eight axis ticks over [0, range].
// REQUIRES: range > 0.
double AxisTickStep(double range);

// Deterministic SVG; text is escaped. The axis spans 0 to the larger of the
// longest bar and the marker, plus 8%.
std::string StackedBarsSvg(const StackedBars& chart);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_BAR_CHARTS_H_
