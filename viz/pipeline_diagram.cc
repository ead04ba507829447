#include "viz/pipeline_diagram.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "viz/html_text.h"
#include "viz/svg_plot.h"

namespace clustersim::viz {
namespace {

constexpr double kWidth = 1360;
constexpr double kLabelWidth = 270;
constexpr double kMinBand = 40;  // px: room for the stage's three label lines
constexpr double kPlotWidth = kWidth - kLabelWidth - 20;
constexpr double kTop = 8;
constexpr double kComputeRow = 28;
constexpr double kOtherRow = 14;
constexpr double kRowGap = 3;
constexpr double kStageGap = 12;
constexpr double kAxisHeight = 34;
constexpr double kMinLabelWidth = 20;  // px a block needs for its "F3" label

// A block to draw: a run of spans merged for drawing.
struct Block {
  double x0;
  double x1;
  TimelineSpan first;  // what the block shows (its first span's meaning)
  int64_t start_ps;
  int64_t end_ps;
};

// Merges a row's spans into blocks (see the header for the rules): first runs
// of the same pass, kind and micro-batch; then runs under a pixel fold into
// the block before them.
std::vector<Block> Blocks(const std::vector<TimelineSpan>& spans, double px_per_ps) {
  std::vector<Block> runs;
  for (const TimelineSpan& s : spans) {
    const double x0 = static_cast<double>(s.start_ps) * px_per_ps;
    const double x1 = static_cast<double>(s.end_ps) * px_per_ps;
    if (!runs.empty() && x0 - runs.back().x1 <= 0.5 && runs.back().first.phase == s.phase &&
        runs.back().first.kind == s.kind && runs.back().first.microbatch == s.microbatch) {
      runs.back().x1 = std::max(runs.back().x1, x1);
      runs.back().end_ps = std::max(runs.back().end_ps, s.end_ps);
      continue;
    }
    runs.push_back({x0, x1, s, s.start_ps, s.end_ps});
  }
  std::vector<Block> blocks;
  for (const Block& r : runs) {
    if (!blocks.empty() && r.x1 - r.x0 < 1.0 && r.x0 - blocks.back().x1 <= 0.5) {
      blocks.back().x1 = std::max(blocks.back().x1, r.x1);
      blocks.back().end_ps = std::max(blocks.back().end_ps, r.end_ps);
      continue;
    }
    blocks.push_back(r);
  }
  return blocks;
}

std::string BlockLabel(const TimelineSpan& s) {
  if (s.kind != SpanKind::kCompute || s.microbatch < 0) {
    return s.phase == SpanPhase::kStep && s.kind == SpanKind::kCompute ? "opt" : "";
  }
  switch (s.phase) {
    case SpanPhase::kForward: return absl::StrCat("F", s.microbatch);
    case SpanPhase::kBackward: return absl::StrCat("B", s.microbatch);
    case SpanPhase::kBackwardWeight: return absl::StrCat("W", s.microbatch);
    default: return "";
  }
}

std::string Tooltip(const Block& b) {
  std::string t(SpanPhaseName(b.first.phase));
  if (b.first.microbatch >= 0) absl::StrAppend(&t, " mb", b.first.microbatch);
  absl::StrAppend(&t, " ", std::string(SpanKindName(b.first.kind)), ": ",
                  FixedNumber(static_cast<double>(b.start_ps) * 1e-9, 3), " - ",
                  FixedNumber(static_cast<double>(b.end_ps) * 1e-9, 3), " ms (",
                  HumanSeconds(static_cast<double>(b.end_ps - b.start_ps) * 1e-12), ")");
  return t;
}

// A round tick step (1, 2 or 5 x 10^k) giving about eight ticks over `range`.
double TickStep(double range) {
  const double raw = range / 8;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

}  // namespace

std::string_view SpanColor(SpanPhase phase, SpanKind kind, int32_t microbatch) {
  const bool odd = microbatch >= 0 && microbatch % 2 == 1;
  switch (kind) {
    case SpanKind::kCompute:
      switch (phase) {
        case SpanPhase::kForward: return odd ? "#7aa6d6" : "#3f6fa8";
        case SpanPhase::kBackward: return odd ? "#8ccf80" : "#4b9a41";
        case SpanPhase::kBackwardWeight: return odd ? "#d3a6c8" : "#a8649a";
        case SpanPhase::kStep: return "#e45756";
        case SpanPhase::kOther: return "#8c8c8c";
      }
      return "#8c8c8c";
    case SpanKind::kCommTp: return "#f58518";
    case SpanKind::kCommCp: return "#d8b22e";
    case SpanKind::kCommEp: return "#9d755d";
    case SpanKind::kCommDp: return "#79706e";
    case SpanKind::kCommPp: return "#39a6a0";
    case SpanKind::kHost: return "#c7c7c7";
    case SpanKind::kOther: return "#8c8c8c";
  }
  return "#8c8c8c";
}

std::string PipelineLegendHtml() {
  struct Entry {
    std::string_view label;
    std::string_view color;
  };
  const Entry entries[] = {
      {"forward (even / odd micro-batch)", SpanColor(SpanPhase::kForward, SpanKind::kCompute, 0)},
      {"", SpanColor(SpanPhase::kForward, SpanKind::kCompute, 1)},
      {"backward", SpanColor(SpanPhase::kBackward, SpanKind::kCompute, 0)},
      {"", SpanColor(SpanPhase::kBackward, SpanKind::kCompute, 1)},
      {"weight gradient", SpanColor(SpanPhase::kBackwardWeight, SpanKind::kCompute, 0)},
      {"optimizer", SpanColor(SpanPhase::kStep, SpanKind::kCompute, 0)},
      {"comm: tp", SpanColor(SpanPhase::kOther, SpanKind::kCommTp, 0)},
      {"comm: cp", SpanColor(SpanPhase::kOther, SpanKind::kCommCp, 0)},
      {"comm: ep", SpanColor(SpanPhase::kOther, SpanKind::kCommEp, 0)},
      {"comm: dp", SpanColor(SpanPhase::kOther, SpanKind::kCommDp, 0)},
      {"comm: pp", SpanColor(SpanPhase::kOther, SpanKind::kCommPp, 0)},
      {"host launch", SpanColor(SpanPhase::kOther, SpanKind::kHost, 0)},
  };
  std::string out = "<div class=\"legend\">";
  for (const Entry& e : entries) {
    absl::StrAppend(&out, "<span class=\"swatch\" style=\"background:", std::string(e.color),
                    "\"></span>");
    if (!e.label.empty()) absl::StrAppend(&out, "<span>", std::string(e.label), "</span>");
  }
  out += "<span class=\"swatch idle\"></span><span>idle: bubble or waiting</span></div>\n";
  return out;
}

std::string PipelineDiagramSvg(const Timeline& timeline) {
  // The representative GPU of each stage: its lowest-numbered group.
  std::map<int, uint32_t> stage_gpu;
  std::map<int, int> stage_count;
  for (const auto& [group, g] : timeline.groups()) {
    stage_gpu.try_emplace(g.stage, group);
    ++stage_count[g.stage];
  }
  double height = kTop + kAxisHeight;
  for (const auto& [stage, group] : stage_gpu) {
    const size_t lanes = timeline.groups().at(group).lanes.size();
    const double band =
        lanes == 0 ? 0 : kComputeRow + kRowGap + static_cast<double>(lanes - 1) * (kOtherRow + kRowGap);
    height += std::max(band, kMinBand) + kStageGap;
  }
  std::string out = absl::StrCat(
      "<svg id=\"pipeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ", Px(kWidth), " ",
      Px(height), "\" width=\"", Px(kWidth), "\" height=\"", Px(height),
      "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<defs><pattern id=\"idle\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d0d0d0\" stroke-width=\"2\"/>"
      "</pattern></defs>\n");
  if (timeline.end_ps() <= 0) {
    absl::StrAppend(&out, "<text x=\"10\" y=\"30\">no spans were recorded</text>\n</svg>\n");
    return out;
  }
  const double px_per_ps = kPlotWidth / static_cast<double>(timeline.end_ps());
  double y = kTop;
  for (const auto& [stage, group] : stage_gpu) {
    const TimelineGroup& g = timeline.groups().at(group);
    const double band_top = y;
    for (const auto& [lane, l] : g.lanes) {
      // The lowest lane is the compute stream (lane 0 in strategies/step_plan.h).
      const bool compute_row = lane == g.lanes.begin()->first;
      const double h = compute_row ? kComputeRow : kOtherRow;
      absl::StrAppend(&out, "<text x=\"", Px(kLabelWidth - 6), "\" y=\"", Px(y + h / 2 + 4),
                      "\" text-anchor=\"end\">", HtmlEscape(l.name), "</text>\n");
      absl::StrAppend(&out, "<rect x=\"", Px(kLabelWidth), "\" y=\"", Px(y), "\" width=\"",
                      Px(kPlotWidth), "\" height=\"", Px(h), "\" fill=\"",
                      compute_row ? "url(#idle)" : "#fafafa", "\"/>\n");
      for (const Block& b : Blocks(l.spans, px_per_ps)) {
        const double w = std::max(b.x1 - b.x0, 0.3);
        absl::StrAppend(&out, "<rect x=\"", Px(kLabelWidth + b.x0), "\" y=\"", Px(y),
                        "\" width=\"", FixedNumber(w, 2), "\" height=\"", Px(h), "\" fill=\"",
                        std::string(SpanColor(b.first.phase, b.first.kind, b.first.microbatch)),
                        "\"><title>", HtmlEscape(Tooltip(b)), "</title></rect>\n");
        const std::string label = BlockLabel(b.first);
        if (compute_row && !label.empty() && w >= kMinLabelWidth) {
          absl::StrAppend(&out, "<text x=\"", Px(kLabelWidth + b.x0 + w / 2), "\" y=\"",
                          Px(y + h / 2 + 4), "\" text-anchor=\"middle\" fill=\"#fff\">", label,
                          "</text>\n");
        }
      }
      y += h + kRowGap;
    }
    const int n = stage_count[stage];
    absl::StrAppend(
        &out, "<text x=\"6\" y=\"", Px(band_top + 11), "\" font-weight=\"bold\">stage ", stage,
        "</text>\n<text x=\"6\" y=\"", Px(band_top + 23), "\" fill=\"#555\" font-size=\"9\">",
        HtmlEscape(g.name), "</text>\n<text x=\"6\" y=\"", Px(band_top + 35),
        "\" fill=\"#555\" font-size=\"9\">", n, " GPU", n == 1 ? "" : "s",
        " simulated; detail: ", std::string(TimelineDetailName(g.detail)),
        g.dropped > 0 ? absl::StrCat("; ", g.dropped, " spans not kept") : "", "</text>\n");
    y = std::max(y, band_top + kMinBand);
    absl::StrAppend(&out, "<line x1=\"0\" x2=\"", Px(kWidth), "\" y1=\"", Px(y + kStageGap / 2),
                    "\" y2=\"", Px(y + kStageGap / 2), "\" stroke=\"#ddd\"/>\n");
    y += kStageGap;
  }
  // Time axis.
  const double end_ms = static_cast<double>(timeline.end_ps()) * 1e-9;
  const double step = TickStep(end_ms);
  absl::StrAppend(&out, "<line x1=\"", Px(kLabelWidth), "\" x2=\"", Px(kLabelWidth + kPlotWidth),
                  "\" y1=\"", Px(y), "\" y2=\"", Px(y), "\" stroke=\"#333\"/>\n");
  for (int i = 0; i * step <= end_ms * (1 + 1e-9); ++i) {
    const double x = kLabelWidth + i * step / end_ms * kPlotWidth;
    absl::StrAppend(&out, "<line x1=\"", Px(x), "\" x2=\"", Px(x), "\" y1=\"", Px(y), "\" y2=\"",
                    Px(y + 5), "\" stroke=\"#333\"/><text x=\"", Px(x), "\" y=\"", Px(y + 17),
                    "\" text-anchor=\"middle\">", FixedNumber(i * step, step < 1 ? 2 : 0),
                    "</text>\n");
  }
  absl::StrAppend(&out, "<text x=\"", Px(kLabelWidth - 6), "\" y=\"", Px(y + 17),
                  "\" text-anchor=\"end\">time (ms)</text>\n</svg>\n");
  return out;
}

}  // namespace clustersim::viz
