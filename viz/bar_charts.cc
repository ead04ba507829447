#include "viz/bar_charts.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "viz/html_text.h"
#include "viz/svg_plot.h"

namespace clustersim::viz {
namespace {

constexpr double kWidth = 1360;
constexpr double kLabelWidth = 130;
constexpr double kNoteWidth = 190;
constexpr double kPlotWidth = kWidth - kLabelWidth - kNoteWidth;
constexpr double kBarHeight = 34;
constexpr double kBarGap = 10;
constexpr double kAxisHeight = 26;
constexpr double kLegendRow = 18;
constexpr int kLegendColumns = 3;

double RowTotal(const BarRow& row) {
  double t = 0;
  for (const BarSegment& s : row.segments) t += std::max(s.value, 0.0);
  return t;
}

}  // namespace

double AxisTickStep(double range) {
  const double raw = range / 8;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

std::string StackedBarsSvg(const StackedBars& chart) {
  double axis_max = std::max(chart.marker, 0.0);
  for (const BarRow& row : chart.rows) axis_max = std::max(axis_max, RowTotal(row));
  axis_max = axis_max > 0 ? axis_max * 1.08 : 1.0;
  const double scale = kPlotWidth / axis_max;
  const std::vector<BarSegment> legend =
      chart.rows.empty() ? std::vector<BarSegment>{} : chart.rows.front().segments;
  const int legend_rows = (static_cast<int>(legend.size()) + kLegendColumns - 1) / kLegendColumns;
  const double bars_height = chart.rows.size() * (kBarHeight + kBarGap);
  const double height = 8 + bars_height + kAxisHeight + legend_rows * kLegendRow + 8;
  std::string out = absl::StrCat(
      "<svg id=\"", HtmlEscape(chart.id), "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ",
      Px(kWidth), " ", Px(height), "\" width=\"", Px(kWidth), "\" height=\"", Px(height),
      "\" font-family=\"sans-serif\" font-size=\"12\">\n");
  double y = 8;
  for (const BarRow& row : chart.rows) {
    absl::StrAppend(&out, "<text x=\"", Px(kLabelWidth - 8), "\" y=\"", Px(y + kBarHeight / 2 + 4),
                    "\" text-anchor=\"end\" font-weight=\"bold\">", HtmlEscape(row.label),
                    "</text>\n");
    double x = kLabelWidth;
    for (const BarSegment& s : row.segments) {
      if (s.value <= 0) continue;
      const double w = s.value * scale;
      const std::string value = absl::StrCat(FixedNumber(s.value, chart.decimals), " ",
                                             HtmlEscape(chart.unit));
      absl::StrAppend(&out, "<rect x=\"", Px(x), "\" y=\"", Px(y), "\" width=\"",
                      FixedNumber(std::max(w, 0.5), 2), "\" height=\"", Px(kBarHeight),
                      "\" fill=\"", HtmlEscape(s.color), "\" stroke=\"#fff\"><title>",
                      HtmlEscape(s.label), ": ", value, "</title></rect>\n");
      if (w >= 8.0 * static_cast<double>(s.label.size())) {
        absl::StrAppend(&out, "<text x=\"", Px(x + w / 2), "\" y=\"", Px(y + kBarHeight / 2 + 4),
                        "\" text-anchor=\"middle\" fill=\"#fff\">", HtmlEscape(s.label),
                        "</text>\n");
      }
      x += w;
    }
    absl::StrAppend(&out, "<text x=\"", Px(x + 8), "\" y=\"", Px(y + kBarHeight / 2 + 4), "\">",
                    HtmlEscape(row.note), "</text>\n");
    y += kBarHeight + kBarGap;
  }
  if (chart.marker >= 0) {
    const double mx = kLabelWidth + chart.marker * scale;
    absl::StrAppend(&out, "<line x1=\"", Px(mx), "\" x2=\"", Px(mx), "\" y1=\"2\" y2=\"", Px(y),
                    "\" stroke=\"#c00\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                    "<text x=\"", Px(mx + 4), "\" y=\"", Px(y - 2),
                    "\" fill=\"#c00\" font-size=\"11\">", HtmlEscape(chart.marker_label),
                    "</text>\n");
  }
  // Axis.
  const double step = AxisTickStep(axis_max);
  absl::StrAppend(&out, "<line x1=\"", Px(kLabelWidth), "\" x2=\"", Px(kLabelWidth + kPlotWidth),
                  "\" y1=\"", Px(y), "\" y2=\"", Px(y), "\" stroke=\"#333\"/>\n");
  for (int i = 0; i * step <= axis_max; ++i) {
    const double x = kLabelWidth + i * step * scale;
    absl::StrAppend(&out, "<line x1=\"", Px(x), "\" x2=\"", Px(x), "\" y1=\"", Px(y), "\" y2=\"",
                    Px(y + 4), "\" stroke=\"#333\"/><text x=\"", Px(x), "\" y=\"", Px(y + 16),
                    "\" text-anchor=\"middle\" font-size=\"11\">",
                    FixedNumber(i * step, step < 1 ? (step < 0.01 ? 3 : 2) : 0), "</text>\n");
  }
  absl::StrAppend(&out, "<text x=\"", Px(kLabelWidth - 24), "\" y=\"", Px(y + 16),
                  "\" text-anchor=\"end\" font-size=\"11\">", HtmlEscape(chart.unit), "</text>\n");
  // Legend: the first bar's segments with value and share.
  y += kAxisHeight;
  const double total = chart.rows.empty() ? 0 : RowTotal(chart.rows.front());
  const double column = (kWidth - kLabelWidth) / kLegendColumns;
  for (size_t i = 0; i < legend.size(); ++i) {
    const BarSegment& s = legend[i];
    const double lx = kLabelWidth + static_cast<double>(i % kLegendColumns) * column;
    const double ly = y + static_cast<double>(i / kLegendColumns) * kLegendRow;
    const double share = total > 0 ? 100 * std::max(s.value, 0.0) / total : 0;
    absl::StrAppend(&out, "<rect x=\"", Px(lx), "\" y=\"", Px(ly), "\" width=\"12\" height=\"12\" "
                    "fill=\"", HtmlEscape(s.color), "\"/><text x=\"", Px(lx + 18), "\" y=\"",
                    Px(ly + 10), "\">", HtmlEscape(s.label), ": ",
                    FixedNumber(s.value, chart.decimals), " ", HtmlEscape(chart.unit), " (",
                    FixedNumber(share, 1), "%)</text>\n");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace clustersim::viz
