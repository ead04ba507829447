#include "viz/memory_chart.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "viz/html_text.h"
#include "viz/svg_plot.h"

namespace clustersim::viz {
namespace {

constexpr double kWidth = 1360;
constexpr double kLeft = 70;
constexpr double kRight = 30;
constexpr double kTop = 10;
constexpr double kPlotHeight = 170;
constexpr double kAxisHeight = 34;
constexpr double kLegendRow = 18;
constexpr const char* kColors[] = {"#3f6fa8", "#e45756", "#4b9a41", "#f58518"};

// At most kMaxSteps (time, GiB) steps: the largest value of each time bucket.
std::vector<std::pair<double, double>> Reduce(const std::vector<std::pair<double, double>>& pts,
                                              double end_s) {
  if (static_cast<int>(pts.size()) <= kMaxSteps || end_s <= 0) return pts;
  std::vector<std::pair<double, double>> out;
  const double width = end_s / kMaxSteps;
  int bucket = -1;
  for (const auto& [t, v] : pts) {
    const int b = std::min(static_cast<int>(t / width), kMaxSteps - 1);
    if (b != bucket) {
      out.push_back({b * width, v});
      bucket = b;
    } else {
      out.back().second = std::max(out.back().second, v);
    }
  }
  return out;
}

}  // namespace

std::string MemoryCurveSvg(const std::vector<MemoryCurve>& curves, double capacity_gib,
                           double end_s) {
  double y_max = std::max(capacity_gib, 0.0);
  double x_max = end_s;
  for (const MemoryCurve& c : curves) {
    for (const auto& [t, v] : c.points) {
      y_max = std::max(y_max, v);
      x_max = std::max(x_max, t);
    }
  }
  y_max = y_max > 0 ? y_max * 1.08 : 1.0;
  x_max = x_max > 0 ? x_max : 1.0;
  const double plot_width = kWidth - kLeft - kRight;
  const auto X = [&](double t) { return kLeft + t / x_max * plot_width; };
  const auto Y = [&](double v) { return kTop + kPlotHeight - v / y_max * kPlotHeight; };
  const double height = kTop + kPlotHeight + kAxisHeight + curves.size() * kLegendRow + 6;
  const PlotArea area{kLeft, kTop, plot_width, kPlotHeight};
  const double bottom = area.bottom();
  std::string out = absl::StrCat(
      SvgOpen("memory-curve", kWidth, height), PlotAxesSvg(area),
      YTicksSvg(area, y_max, "GiB", [](double v) { return FixedNumber(v, 0); }),
      XTicksSvg(area, x_max, [](double v) { return HumanSeconds(v); }));
  if (capacity_gib >= 0) {
    absl::StrAppend(&out, "<line x1=\"", Px(kLeft), "\" x2=\"", Px(kLeft + plot_width),
                    "\" y1=\"", Px(Y(capacity_gib)), "\" y2=\"", Px(Y(capacity_gib)),
                    "\" stroke=\"#c00\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/><text x=\"",
                    Px(kLeft + plot_width - 4), "\" y=\"", Px(Y(capacity_gib) - 4),
                    "\" text-anchor=\"end\" fill=\"#c00\" font-size=\"11\">capacity ",
                    FixedNumber(capacity_gib, 1), " GiB</text>\n");
  }
  // One step line per curve, held to the step's end.
  for (size_t i = 0; i < curves.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    const std::vector<std::pair<double, double>> pts = Reduce(curves[i].points, x_max);
    double peak = 0;
    std::string path;
    for (size_t k = 0; k < pts.size(); ++k) {
      const auto& [t, v] = pts[k];
      peak = std::max(peak, v);
      absl::StrAppend(&path, k == 0 ? "M" : " H", Px(X(t)), k == 0 ? "," : " V", Px(Y(v)));
    }
    if (!pts.empty()) {
      absl::StrAppend(&path, " H", Px(X(x_max)));
      absl::StrAppend(&out, "<path d=\"", path, "\" fill=\"none\" stroke=\"", color,
                      "\" stroke-width=\"1.6\"><title>", HtmlEscape(curves[i].label), ": peak ",
                      FixedNumber(peak, 1), " GiB</title></path>\n");
    }
    const double ly = bottom + kAxisHeight + i * kLegendRow;
    absl::StrAppend(&out, "<rect x=\"", Px(kLeft), "\" y=\"", Px(ly - 10),
                    "\" width=\"14\" height=\"4\" fill=\"", color, "\"/><text x=\"",
                    Px(kLeft + 20), "\" y=\"", Px(ly - 5), "\">", HtmlEscape(curves[i].label),
                    ": peak ", FixedNumber(peak, 1), " GiB</text>\n");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace clustersim::viz
