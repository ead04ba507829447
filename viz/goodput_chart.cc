#include "viz/goodput_chart.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "viz/html_text.h"
#include "viz/svg_plot.h"

namespace clustersim::viz {
namespace {

std::string Days(double d) { return absl::StrFormat("%.1f d", d); }

const char* ColorOf(const std::string& kind) {
  if (kind == "failure") return "#c0392b";
  if (kind == "planned") return "#e67e22";
  if (kind == "finish") return "#2c3e50";
  return "#95a5a6";  // checkpoint
}

}  // namespace

std::string GoodputTimelineSvg(const config::Goodput& g) {
  const PlotArea a{.left = 60, .top = 20, .width = 1200, .height = 60};
  const double end = std::max(g.sample_run_days(), 1e-9);
  std::string out = SvgOpen("goodput-timeline", 1300, 130);
  absl::StrAppendFormat(&out,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"#eaf2f8\"/>\n",
                        a.left, a.top, a.width, a.height);
  for (const config::RunEvent& e : g.sample_run()) {
    const double x = a.left + a.width * std::min(1.0, e.t_hours() / 24.0 / end);
    const bool small = e.kind() == "checkpoint";
    if (!small && e.duration_s() > 0) {
      // The restart that follows, in green.
      absl::StrAppendFormat(&out,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "fill=\"#27ae60\" opacity=\"0.5\"/>\n",
                            x, a.top, std::max(0.5, a.width * e.duration_s() / 86400.0 / end),
                            a.height);
    }
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                          "stroke-width=\"%s\"><title>%s%s%s at %.2f h</title></line>\n",
                          x, small ? a.top + a.height * 0.6 : a.top, x, a.bottom(),
                          ColorOf(e.kind()), small ? "1" : "2", HtmlEscape(e.kind()),
                          e.cause().empty() ? "" : ": ", HtmlEscape(e.cause()), e.t_hours());
  }
  out += PlotAxesSvg(a);
  out += XTicksSvg(a, end, [](double v) { return Days(v); });
  return absl::StrCat(out, "</svg>\n");
}

std::string GoodputHistogramSvg(const config::Goodput& g) {
  const PlotArea a{.left = 60, .top = 20, .width = 800, .height = 160};
  std::string out = SvgOpen("goodput-histogram", 900, 230);
  const int bins = g.histogram_counts_size();
  if (bins == 0 || g.histogram_edges_days_size() != bins + 1) return absl::StrCat(out, "</svg>\n");
  const double lo = g.histogram_edges_days(0), hi = g.histogram_edges_days(bins);
  const double span = std::max(hi - lo, 1e-9);
  int top = 1;
  for (int c : g.histogram_counts()) top = std::max(top, c);
  for (int b = 0; b < bins; ++b) {
    const double h = a.height * g.histogram_counts(b) / top;
    absl::StrAppendFormat(&out,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                          "fill=\"#5dade2\"><title>%d trials</title></rect>\n",
                          a.left + a.width * b / bins, a.bottom() - h, a.width / bins - 1, h,
                          g.histogram_counts(b));
  }
  const config::GoodputQuantiles& q = g.time_to_train_days();
  for (const auto& [name, v] : {std::pair{"p10", q.p10()}, {"p50", q.p50()}, {"p90", q.p90()}}) {
    const double x = a.left + a.width * std::clamp((v - lo) / span, 0.0, 1.0);
    absl::StrAppendFormat(
        &out,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#2c3e50\" "
        "stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
        "text-anchor=\"middle\">%s %.2f d</text>\n",
        x, a.top, x, a.bottom(), x, a.top - 5, name, v);
  }
  out += PlotAxesSvg(a);
  absl::StrAppendFormat(&out,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%.2f d</text>"
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.2f "
                        "d</text>\n",
                        a.left, a.bottom() + 15, lo, a.left + a.width, a.bottom() + 15, hi);
  return absl::StrCat(out, "</svg>\n");
}

}  // namespace clustersim::viz
