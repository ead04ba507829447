#include "viz/svg_plot.h"

#include "absl/strings/str_cat.h"
#include "viz/bar_charts.h"
#include "viz/html_text.h"

namespace clustersim::viz {

std::string Px(double v) { return FixedNumber(v, 1); }

std::string SvgOpen(std::string_view id, double width, double height) {
  return absl::StrCat("<svg id=\"", HtmlEscape(id),
                      "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ", Px(width), " ",
                      Px(height), "\" width=\"", Px(width), "\" height=\"", Px(height),
                      "\" font-family=\"sans-serif\" font-size=\"12\">\n");
}

std::string PlotAxesSvg(const PlotArea& a) {
  return absl::StrCat("<line x1=\"", Px(a.left), "\" x2=\"", Px(a.left + a.width), "\" y1=\"",
                      Px(a.bottom()), "\" y2=\"", Px(a.bottom()),
                      "\" stroke=\"#333\"/>\n<line x1=\"", Px(a.left), "\" x2=\"", Px(a.left),
                      "\" y1=\"", Px(a.top), "\" y2=\"", Px(a.bottom()), "\" stroke=\"#333\"/>\n");
}

std::string XTicksSvg(const PlotArea& a, double max,
                      const std::function<std::string(double)>& label) {
  std::string out;
  const double step = AxisTickStep(max);
  for (int i = 0; i * step <= max; ++i) {
    const double x = a.left + i * step / max * a.width;
    absl::StrAppend(&out, "<line x1=\"", Px(x), "\" x2=\"", Px(x), "\" y1=\"", Px(a.bottom()),
                    "\" y2=\"", Px(a.bottom() + 4), "\" stroke=\"#333\"/><text x=\"", Px(x),
                    "\" y=\"", Px(a.bottom() + 16), "\" text-anchor=\"middle\" font-size=\"11\">",
                    HtmlEscape(label(i * step)), "</text>\n");
  }
  return out;
}

std::string YTicksSvg(const PlotArea& a, double max, std::string_view unit,
                      const std::function<std::string(double)>& label) {
  std::string out;
  const double step = AxisTickStep(max);
  for (int i = 0; i * step <= max; ++i) {
    const double y = a.bottom() - i * step / max * a.height;
    absl::StrAppend(&out, "<text x=\"", Px(a.left - 6), "\" y=\"", Px(y + 4),
                    "\" text-anchor=\"end\" font-size=\"11\">", HtmlEscape(label(i * step)),
                    "</text>\n");
  }
  absl::StrAppend(&out, "<text x=\"", Px(a.left - 6), "\" y=\"", Px(a.top - 1),
                  "\" text-anchor=\"end\" font-size=\"11\">", HtmlEscape(unit), "</text>\n");
  return out;
}

}  // namespace clustersim::viz
