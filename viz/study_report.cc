#include "viz/study_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "viz/html_text.h"
#include "viz/svg_plot.h"

namespace clustersim::viz {
namespace {

constexpr double kWidth = 1360;
constexpr double kHeight = 460;
constexpr double kLeft = 90;
constexpr double kRight = 220;  // room for front labels
constexpr double kTop = 16;
constexpr double kBottom = 46;

constexpr std::string_view kStyle = R"css(
body { font-family: sans-serif; margin: 16px 20px; color: #222; max-width: 1380px; }
h1 { font-size: 22px; margin: 0 0 4px 0; }
h2 { font-size: 17px; margin: 22px 0 6px 0; border-bottom: 1px solid #ddd; }
p.sub { margin: 2px 0; color: #555; }
table.study { border-collapse: collapse; font-size: 13px; }
table.study th { background: #eef1f5; text-align: right; padding: 4px 10px; white-space: nowrap;
                 border-bottom: 2px solid #9aa5b1; }
table.study th.label, table.study td.label { text-align: left; }
table.study th.sorted { background: #dde4ee; }
table.study td { text-align: right; padding: 3px 10px; border-bottom: 1px solid #e4e4e4;
                 white-space: nowrap; }
table.study tr.front td { font-weight: bold; }
table.study tr.front td.label::before { content: "\2605 "; color: #c00; }
table.study tr.nofit td { color: #999; }
)css";

bool Usable(const StudyRow& r) {
  return r.fits && std::isfinite(r.time_to_train_s) && std::isfinite(r.dollars);
}

// Seconds as a training duration: days, hours or the short units.
std::string HumanDuration(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s >= 86400) return absl::StrCat(FixedNumber(s / 86400, 1), " days");
  if (s >= 3600) return absl::StrCat(FixedNumber(s / 3600, 1), " h");
  return HumanSeconds(s);
}

std::string Dollars(double d) {
  if (!std::isfinite(d)) return "n/a";
  return absl::StrCat("$", FixedNumber(d, d < 1 ? 4 : (d < 100 ? 2 : 0)));
}

// The two axes of the front, as the headers and the scatter name them.
const char* TimeName(const StudyReportOptions& options) {
  return options.step_axes ? "step time" : "time to train";
}
const char* CostName(const StudyReportOptions& options) {
  return options.step_axes ? "$ per million tokens" : "cost";
}

}  // namespace

std::vector<bool> ParetoFront(const std::vector<StudyRow>& rows) {
  std::vector<size_t> usable;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (Usable(rows[i])) usable.push_back(i);
  }
  std::sort(usable.begin(), usable.end(), [&](size_t a, size_t b) {
    return std::tie(rows[a].time_to_train_s, rows[a].dollars, a) <
           std::tie(rows[b].time_to_train_s, rows[b].dollars, b);
  });
  std::vector<bool> front(rows.size(), false);
  double best_before = std::numeric_limits<double>::infinity();  // cheapest strictly faster
  for (size_t g = 0; g < usable.size();) {
    // Rows with the same time form a group; its cheapest are on the front
    // unless something faster is no dearer.
    size_t end = g;
    while (end < usable.size() &&
           rows[usable[end]].time_to_train_s == rows[usable[g]].time_to_train_s) {
      ++end;
    }
    const double cheapest = rows[usable[g]].dollars;  // sorted by cost within the group
    for (size_t k = g; k < end && rows[usable[k]].dollars == cheapest; ++k) {
      front[usable[k]] = cheapest < best_before;
    }
    best_before = std::min(best_before, cheapest);
    g = end;
  }
  return front;
}

std::vector<size_t> StudyOrder(const std::vector<StudyRow>& rows) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(rows[a].time_to_train_s, rows[a].dollars, rows[a].label, a) <
           std::tie(rows[b].time_to_train_s, rows[b].dollars, rows[b].label, b);
  });
  return order;
}

std::string StudyTableHtml(const std::vector<StudyRow>& rows, const StudyReportOptions& options) {
  const std::vector<bool> front = ParetoFront(rows);
  std::string memory_header = "memory / GPU";
  if (options.memory_capacity_gib >= 0) {
    absl::StrAppend(&memory_header, " (of ", FixedNumber(options.memory_capacity_gib, 0), " GiB)");
  }
  std::string out = absl::StrCat(
      "<table id=\"study-table\" class=\"study\">\n<thead><tr><th class=\"label\">strategy</th>",
      options.step_axes ? "" : "<th>step time</th>", "<th>tokens/s</th><th>MFU</th><th>",
      HtmlEscape(memory_header), "</th><th>fits</th><th>$/GPU-hour</th>",
      "<th class=\"sorted\" title=\"sorted ascending\">", TimeName(options), " &#9650;</th><th>",
      CostName(options), "</th></tr></thead>\n<tbody>\n");
  for (const size_t i : StudyOrder(rows)) {
    const StudyRow& r = rows[i];
    const char* cls = front[i] ? " class=\"front\"" : (r.fits ? "" : " class=\"nofit\"");
    absl::StrAppend(&out, "<tr", cls, "><td class=\"label\">", HtmlEscape(r.label), "</td><td>",
                    options.step_axes ? "" : absl::StrCat(HumanSeconds(r.step_time_s), "</td><td>"),
                    FixedNumber(r.tokens_per_s, 0), "</td><td>", FixedNumber(100 * r.mfu, 1),
                    "%</td><td>", FixedNumber(r.memory_gib, 1), " GiB</td><td>",
                    r.fits ? "yes" : "no", "</td><td>", Dollars(r.usd_per_gpu_hour), "</td><td>",
                    HumanDuration(r.time_to_train_s), "</td><td>",
                    Dollars(r.dollars), "</td></tr>\n");
  }
  out += "</tbody>\n</table>\n";
  return out;
}

std::string StudyScatterSvg(const std::vector<StudyRow>& rows, const StudyReportOptions& options) {
  const std::vector<bool> front = ParetoFront(rows);
  double t_max = 0, d_max = 0;
  for (const StudyRow& r : rows) {
    if (!std::isfinite(r.time_to_train_s) || !std::isfinite(r.dollars)) continue;
    t_max = std::max(t_max, r.time_to_train_s);
    d_max = std::max(d_max, r.dollars);
  }
  // Time in days, hours or seconds, whichever suits the largest.
  const double unit = t_max >= 2 * 86400 ? 86400 : (t_max >= 2 * 3600 ? 3600 : 1);
  const char* unit_name = unit == 86400 ? "days" : (unit == 3600 ? "hours" : "seconds");
  const double x_max = t_max > 0 ? t_max / unit * 1.08 : 1.0;
  const double y_max = d_max > 0 ? d_max * 1.08 : 1.0;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  const auto X = [&](double t) { return kLeft + t / unit / x_max * pw; };
  const auto Y = [&](double d) { return kTop + ph - d / y_max * ph; };
  const PlotArea area{kLeft, kTop, pw, ph};
  std::string out = absl::StrCat(
      SvgOpen("study-scatter", kWidth, kHeight), PlotAxesSvg(area),
      XTicksSvg(area, x_max, [&](double v) { return FixedNumber(v, x_max < 8 ? 1 : 0); }),
      YTicksSvg(area, y_max, CostName(options), [](double v) { return Dollars(v); }));
  absl::StrAppend(&out, "<text x=\"", Px(kLeft + pw / 2), "\" y=\"", Px(area.bottom() + 36),
                  "\" text-anchor=\"middle\">", TimeName(options), " (", unit_name, ")</text>\n");
  // The front as a staircase, fastest first.
  std::string stairs;
  for (const size_t i : StudyOrder(rows)) {
    if (!front[i]) continue;
    const double x = X(rows[i].time_to_train_s), y = Y(rows[i].dollars);
    absl::StrAppend(&stairs, stairs.empty() ? "M" : " H", Px(x), stairs.empty() ? "," : " V",
                    Px(y));
  }
  if (!stairs.empty()) {
    absl::StrAppend(&out, "<path class=\"front\" d=\"", stairs,
                    "\" fill=\"none\" stroke=\"#c00\" stroke-width=\"1.5\"/>\n");
  }
  for (const size_t i : StudyOrder(rows)) {
    const StudyRow& r = rows[i];
    if (!std::isfinite(r.time_to_train_s) || !std::isfinite(r.dollars)) continue;
    const double x = X(r.time_to_train_s), y = Y(r.dollars);
    const std::string title = absl::StrCat(HtmlEscape(r.label), ": ",
                                           HumanDuration(r.time_to_train_s), ", ",
                                           Dollars(r.dollars), r.fits ? "" : " (does not fit)");
    const char* style = front[i]  ? "fill=\"#c00\" stroke=\"#c00\" class=\"front\""
                        : r.fits ? "fill=\"#7f8c9a\" stroke=\"#7f8c9a\""
                                 : "fill=\"none\" stroke=\"#999\" class=\"nofit\"";
    absl::StrAppend(&out, "<circle cx=\"", Px(x), "\" cy=\"", Px(y), "\" r=\"", front[i] ? "5" : "4",
                    "\" ", style, "><title>", title, "</title></circle>\n");
    if (front[i]) {
      absl::StrAppend(&out, "<text x=\"", Px(x + 8), "\" y=\"", Px(y - 6),
                      "\" font-size=\"11\" fill=\"#c00\">", HtmlEscape(r.label), "</text>\n");
    }
  }
  out += "</svg>\n";
  return out;
}

std::string RenderStudyReport(const std::vector<StudyRow>& rows,
                              const StudyReportOptions& options) {
  const std::vector<bool> front = ParetoFront(rows);
  const int on_front = static_cast<int>(std::count(front.begin(), front.end(), true));
  int fitting = 0;
  for (const StudyRow& r : rows) fitting += r.fits ? 1 : 0;
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
      HtmlEscape(options.title), "</title>\n<style>", std::string(kStyle),
      "</style>\n</head>\n<body>\n<h1>", HtmlEscape(options.title), "</h1>\n");
  if (!options.subtitle.empty()) {
    absl::StrAppend(&out, "<p class=\"sub\">", HtmlEscape(options.subtitle), "</p>\n");
  }
  absl::StrAppend(&out, "<p class=\"sub\">", rows.size(), " candidates, ", fitting,
                  " fit in memory, ", on_front,
                  " on the Pareto front of ", TimeName(options), " and ", CostName(options),
                  " (starred, red).</p>\n");
  absl::StrAppend(&out, "<h2>Time against cost</h2>\n", StudyScatterSvg(rows, options));
  absl::StrAppend(&out, "<h2>Candidates</h2>\n", StudyTableHtml(rows, options));
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace clustersim::viz
