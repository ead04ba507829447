// File: viz/svg_plot.h
//
// Pieces shared by the report's x/y charts (memory over time, the study's
// time-vs-cost scatter): the opening <svg> tag, the two axis lines of a plot
// area, and round ticks along each axis (AxisTickStep, viz/bar_charts.h).
// Numbers print with one decimal so that output is deterministic.
//
// Example:
//   PlotArea a{.left = 70, .top = 10, .width = 1260, .height = 170};
//   std::string svg = SvgOpen("memory-curve", 1360, 240) + PlotAxesSvg(a) +
//       XTicksSvg(a, 1.3, [](double v) { return HumanSeconds(v); });
#ifndef CLUSTERSIM_VIZ_SVG_PLOT_H_
#define CLUSTERSIM_VIZ_SVG_PLOT_H_

#include <functional>
#include <string>
#include <string_view>

namespace clustersim::viz {

struct PlotArea {
  double left = 0, top = 0, width = 0, height = 0;
  double bottom() const { return top + height; }
};

// An SVG coordinate or length: one decimal, so that output is deterministic.
std::string Px(double v);

// `<svg id=... viewBox=... width=... height=... font-family=... >` and a newline.
std::string SvgOpen(std::string_view id, double width, double height);

// The x axis along the bottom and the y axis along the left of `a`.
std::string PlotAxesSvg(const PlotArea& a);

// Tick marks below the x axis and their labels, for values 0..max (max > 0).
std::string XTicksSvg(const PlotArea& a, double max,
                      const std::function<std::string(double)>& label);

// Labels left of the y axis for values 0..max (max > 0), and `unit` above it.
std::string YTicksSvg(const PlotArea& a, double max, std::string_view unit,
                      const std::function<std::string(double)>& label);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_SVG_PLOT_H_
