#include "viz/deployment_search_report.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "viz/html_text.h"
#include "viz/svg_plot.h"

namespace clustersim::viz {
namespace {

using config::DeploymentCandidate;
using config::DeploymentSearchResult;

std::string Layout(const DeploymentCandidate& c) {
  if (c.mode() == "disaggregated") {
    return absl::StrCat(c.prefill_instances(), "P tp", c.prefill_tp(), " + ", c.decode_instances(),
                        "D tp", c.decode_tp());
  }
  return absl::StrCat(c.replicas(), " x tp", c.tensor_parallel(), " pp", c.pipeline_parallel(),
                      c.expert_parallel() > 1 ? absl::StrCat(" ep", c.expert_parallel()) : "");
}

std::string Batch(const DeploymentCandidate& c) {
  return c.max_batch_size() > 0 ? absl::StrCat(c.max_batch_size()) : "dflt";
}

std::string Or(bool simulated, double v, int decimals) {
  return simulated ? FixedNumber(v, decimals) : "-";
}

std::string Targets(const DeploymentSearchResult& r) {
  std::vector<std::string> t;
  if (r.target_ttft_ms() > 0) t.push_back(absl::StrCat("p99 TTFT <= ", r.target_ttft_ms(), " ms"));
  if (r.target_tpot_ms() > 0) t.push_back(absl::StrCat("p99 TPOT <= ", r.target_tpot_ms(), " ms"));
  return absl::StrJoin(t, ", ");
}

const DeploymentCandidate* Best(const DeploymentSearchResult& r) {
  return r.candidate_size() > 0 && r.candidate(0).meets_slo() ? &r.candidate(0) : nullptr;
}

int Rows(const DeploymentSearchResult& r) {
  return std::min(r.candidate_size(), std::max(1, r.top_rows()));
}

constexpr std::string_view kStyle = R"css(
table.rank { border-collapse: collapse; font-size: 12px; }
table.rank th { text-align: left; padding: 3px 8px; border-bottom: 1px solid #999; }
table.rank td { padding: 2px 8px; border-bottom: 1px solid #e4e4e4; }
tr.miss td { color: #999; }
tr.front td { font-weight: bold; }
)css";

std::string ParetoSvg(const DeploymentSearchResult& r) {
  constexpr double kWidth = 900, kHeight = 380, kLeft = 80, kRight = 30, kTop = 24, kBottom = 48;
  std::vector<const DeploymentCandidate*> meeting;
  double x_max = r.target_tpot_ms(), y_max = 0;
  for (const DeploymentCandidate& c : r.candidate()) {
    if (!c.meets_slo()) continue;
    meeting.push_back(&c);
    x_max = std::max(x_max, c.tpot_p99_ms());
    y_max = std::max(y_max, c.usd_per_million_output_tokens());
  }
  x_max = x_max > 0 ? x_max * 1.08 : 1;
  y_max = y_max > 0 ? y_max * 1.08 : 1;
  const PlotArea a{kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom};
  const auto X = [&](double v) { return a.left + v / x_max * a.width; };
  const auto Y = [&](double v) { return a.bottom() - v / y_max * a.height; };
  std::string out = absl::StrCat(
      SvgOpen("deploy-pareto", kWidth, kHeight), PlotAxesSvg(a),
      XTicksSvg(a, x_max, [&](double v) { return FixedNumber(v, x_max < 10 ? 1 : 0); }),
      YTicksSvg(a, y_max, "$/M tokens",
                [&](double v) { return FixedNumber(v, y_max < 10 ? 2 : 0); }),
      "<text x=\"", Px(a.left + a.width / 2), "\" y=\"", Px(a.bottom() + 36),
      "\" text-anchor=\"middle\">p99 time per output token (ms)</text>\n");
  if (r.target_tpot_ms() > 0) {
    const double x = X(r.target_tpot_ms());
    absl::StrAppend(&out, "<line class=\"target\" x1=\"", Px(x), "\" x2=\"", Px(x), "\" y1=\"",
                    Px(a.top), "\" y2=\"", Px(a.bottom()),
                    "\" stroke=\"#888\" stroke-dasharray=\"6 4\"/><text x=\"", Px(x - 4), "\" y=\"",
                    Px(a.top + 12), "\" text-anchor=\"end\" fill=\"#555\">target ",
                    FixedNumber(r.target_tpot_ms(), 1), " ms</text>\n");
  }
  // The front as steps, cheapest first.
  std::vector<const DeploymentCandidate*> front;
  for (const DeploymentCandidate* c : meeting) {
    if (c->pareto()) front.push_back(c);
  }
  std::stable_sort(front.begin(), front.end(), [](const auto* p, const auto* q) {
    return p->usd_per_million_output_tokens() < q->usd_per_million_output_tokens();
  });
  if (front.size() > 1) {
    std::string points;
    for (size_t i = 0; i < front.size(); ++i) {
      if (i > 0) {
        absl::StrAppend(&points, " ", Px(X(front[i - 1]->tpot_p99_ms())), ",",
                        Px(Y(front[i]->usd_per_million_output_tokens())));
      }
      absl::StrAppend(&points, i > 0 ? " " : "", Px(X(front[i]->tpot_p99_ms())), ",",
                      Px(Y(front[i]->usd_per_million_output_tokens())));
    }
    absl::StrAppend(&out, "<polyline class=\"front\" points=\"", points,
                    "\" fill=\"none\" stroke=\"#c00\" stroke-width=\"1.5\"/>\n");
  }
  for (int pass = 0; pass < 2; ++pass) {  // the front drawn over the rest
    for (const DeploymentCandidate* c : meeting) {
      if (c->pareto() != (pass == 1)) continue;
      absl::StrAppend(&out, "<circle cx=\"", Px(X(c->tpot_p99_ms())), "\" cy=\"",
                      Px(Y(c->usd_per_million_output_tokens())), "\" r=\"", c->pareto() ? 4 : 3,
                      "\" fill=\"", c->pareto() ? "#c00" : "#999", "\"><title>#", c->rank(), " ",
                      HtmlEscape(c->name()), ": ",
                      FixedNumber(c->usd_per_million_output_tokens(), 3), " $/M tokens, p99 TPOT ",
                      FixedNumber(c->tpot_p99_ms(), 2), " ms</title></circle>\n");
    }
  }
  absl::StrAppend(&out, "<text x=\"", Px(a.left + 10), "\" y=\"", Px(a.top + 12),
                  "\" fill=\"#c00\">Pareto front</text><text x=\"", Px(a.left + 120), "\" y=\"",
                  Px(a.top + 12), "\" fill=\"#999\">meets the targets</text>\n</svg>\n");
  return out;
}

std::string TableRow(const DeploymentCandidate& c) {
  auto td = [](std::string_view v) { return absl::StrCat("<td>", HtmlEscape(v), "</td>"); };
  return absl::StrCat(
      "<tr",
      c.pareto()      ? " class=\"front\""
      : c.meets_slo() ? ""
                      : " class=\"miss\"",
      ">", td(absl::StrCat(c.rank())), td(c.gpu()), td(absl::StrCat(c.num_gpus())), td(c.mode()),
      td(Layout(c)), td(absl::StrCat(c.weight_dtype(), "/", c.kv_cache_dtype())), td(Batch(c)),
      td(Or(c.simulated(), c.ttft_p99_ms(), 1)), td(Or(c.simulated(), c.tpot_p99_ms(), 2)),
      td(Or(c.simulated(), c.output_tokens_per_s(), 0)),
      td(Or(c.simulated(), c.usd_per_million_output_tokens(), 3)),
      td(FixedNumber(c.usd_per_hour(), 2)), td(c.meets_slo() ? "yes" : "no"), td(c.reason()),
      "</tr>\n");
}

constexpr char kHeader[] =
    "<tr><th>#</th><th>GPU</th><th>GPUs</th><th>mode</th><th>layout</th><th>weights/KV</th>"
    "<th>batch</th><th>TTFT p99 (ms)</th><th>TPOT p99 (ms)</th><th>output tok/s</th>"
    "<th>$/M tokens</th><th>$/hour</th><th>meets</th><th>why not</th></tr>\n";

}  // namespace

std::string FormatDeploymentSearch(const DeploymentSearchResult& r) {
  std::string out = absl::StrCat(
      "clustersim serve --search: ", r.model(), " at ", FixedNumber(r.request_rate_per_s(), 3),
      " req/s, ", Targets(r), "\n  searched  ", r.method(), "\n  GPUs      ", r.gpus(),
      "\n  meeting   ", r.meeting_slo(), " of ", r.simulated(), " simulated\n");
  absl::StrAppend(
      &out, absl::StrFormat("%4s  %-15s %4s %-6s %-17s %-9s %5s %9s %8s %9s %9s %8s "
                            "%-4s %s\n",
                            "rank", "gpu", "gpus", "mode", "layout", "wt/kv", "batch", "ttft p99",
                            "tpot p99", "tok/s", "$/M tok", "$/hour", "slo", "why not"));
  for (int i = 0; i < Rows(r); ++i) {
    const DeploymentCandidate& c = r.candidate(i);
    absl::StrAppend(
        &out, absl::StrFormat(
                  "%4d  %-15s %4d %-6s %-17s %-9s %5s %9s %8s %9s %9s %8s %-4s %s\n", c.rank(),
                  c.gpu(), c.num_gpus(), c.mode() == "disaggregated" ? "disagg" : "agg", Layout(c),
                  absl::StrCat(c.weight_dtype(), "/", c.kv_cache_dtype()), Batch(c),
                  Or(c.simulated(), c.ttft_p99_ms(), 1), Or(c.simulated(), c.tpot_p99_ms(), 2),
                  Or(c.simulated(), c.output_tokens_per_s(), 0),
                  Or(c.simulated(), c.usd_per_million_output_tokens(), 3),
                  FixedNumber(c.usd_per_hour(), 2),
                  c.meets_slo() ? (c.pareto() ? "yes*" : "yes") : "no", c.reason()));
  }
  if (Rows(r) < r.candidate_size()) {
    absl::StrAppend(&out, "  ... ", r.candidate_size() - Rows(r),
                    " more rows (--search-top, --format json); * Pareto front of $/M tokens "
                    "against p99 TPOT\n");
  }
  if (const DeploymentCandidate* b = Best(r)) {
    absl::StrAppend(&out, "  cheapest  ", b->name(), ": ",
                    FixedNumber(b->usd_per_million_output_tokens(), 3), " $/M output tokens, ",
                    FixedNumber(b->usd_per_hour(), 2), " $/hour\n  run alone ",
                    b->mode() == "aggregated" ? "clustersim serve <model and workload> " : "",
                    b->reproduce(), "\n");
  } else {
    absl::StrAppend(&out,
                    "  cheapest  none meets the targets; loosen them, lower the rate or raise "
                    "--search-max-gpus\n");
  }
  return out;
}

std::string RenderDeploymentSearchReport(const DeploymentSearchResult& r) {
  const std::string title = absl::StrCat("clustersim serve --search: ", r.model());
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", std::string(kPageBaseCss), std::string(kStyle),
      "</style>\n</head>\n<body>\n<h1>", HtmlEscape(title), "</h1>\n<p class=\"sub\">",
      HtmlEscape(absl::StrCat(FixedNumber(r.request_rate_per_s(), 3), " req/s, ", Targets(r))),
      "</p>\n<p class=\"sub\">", HtmlEscape(r.method()),
      "</p>\n<p class=\"sub\">GPUs: ", HtmlEscape(r.gpus()), "</p>\n");
  if (const DeploymentCandidate* b = Best(r)) {
    absl::StrAppend(&out,
                    "<p class=\"sub\"><b>Cheapest meeting the targets: ", HtmlEscape(b->name()),
                    ", ", FixedNumber(b->usd_per_million_output_tokens(), 3),
                    " $/M output tokens, ", FixedNumber(b->usd_per_hour(), 2), " $/hour</b></p>\n");
  } else {
    absl::StrAppend(&out, "<p class=\"sub\"><b>No candidate meets the targets.</b></p>\n");
  }
  absl::StrAppend(&out, "<h2>Cost against latency</h2>\n", ParetoSvg(r),
                  "<h2>Ranking</h2>\n<table id=\"deploy-ranking\" class=\"rank\">\n", kHeader);
  for (int i = 0; i < Rows(r); ++i) absl::StrAppend(&out, TableRow(r.candidate(i)));
  absl::StrAppend(&out,
                  "</table>\n<h2>Pareto front</h2>\n<table id=\"deploy-front\" "
                  "class=\"rank\">\n",
                  kHeader);
  for (const DeploymentCandidate& c : r.candidate()) {
    if (c.pareto()) absl::StrAppend(&out, TableRow(c));
  }
  absl::StrAppend(&out, "</table>\n</body>\n</html>\n");
  return out;
}

}  // namespace clustersim::viz
