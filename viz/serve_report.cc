#include "viz/serve_report.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "viz/html_text.h"
#include "viz/svg_plot.h"

namespace clustersim::viz {
namespace {

constexpr double kWidth = 900, kHeight = 340;
constexpr double kLeft = 80, kRight = 30, kTop = 20, kBottom = 48;

constexpr std::string_view kStyle = R"css(
table.kv { border-collapse: collapse; font-size: 13px; }
table.kv th { text-align: left; padding: 3px 12px 3px 0; font-weight: normal; color: #555; }
table.kv td { text-align: right; padding: 3px 10px; border-bottom: 1px solid #e4e4e4; }
p.verdict { font-weight: bold; }
p.saturated { color: #c00; font-weight: bold; }
)css";

std::string Row(std::string_view name, const std::string& value) {
  return absl::StrCat("<tr><th>", HtmlEscape(name), "</th><td>", HtmlEscape(value), "</td></tr>\n");
}

std::string Latency(const config::LatencyStats& s) {
  return absl::StrCat(FixedNumber(s.p50(), 2), " / ", FixedNumber(s.p90(), 2), " / ",
                      FixedNumber(s.p99(), 2), " ms");
}

// A line chart of `series` (each a name, colour and y per curve point)
// against output tokens/s; `target` > 0 draws a dashed horizontal line.
std::string CurveSvg(
    std::string_view id, const config::ServeResult& r, std::string_view unit,
    const std::vector<
        std::pair<std::string,
                  std::pair<std::string, std::function<double(const config::ServeCurvePoint&)>>>>&
        series,
    double asked_y, double target) {
  double x_max = r.output_tokens_per_s(), y_max = std::max(asked_y, target);
  for (const config::ServeCurvePoint& p : r.curve()) {
    x_max = std::max(x_max, p.output_tokens_per_s());
    for (const auto& s : series) y_max = std::max(y_max, s.second.second(p));
  }
  x_max = x_max > 0 ? x_max * 1.05 : 1;
  y_max = y_max > 0 ? y_max * 1.08 : 1;
  const PlotArea a{kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom};
  const auto X = [&](double v) { return a.left + v / x_max * a.width; };
  const auto Y = [&](double v) { return a.bottom() - v / y_max * a.height; };
  std::string out = absl::StrCat(
      SvgOpen(id, kWidth, kHeight), PlotAxesSvg(a),
      XTicksSvg(a, x_max, [](double v) { return FixedNumber(v, 0); }),
      YTicksSvg(a, y_max, unit, [&](double v) { return FixedNumber(v, y_max < 10 ? 1 : 0); }),
      "<text x=\"", Px(a.left + a.width / 2), "\" y=\"", Px(a.bottom() + 36),
      "\" text-anchor=\"middle\">output tokens/s (all replicas)</text>\n");
  double legend_x = a.left + 10;
  for (const auto& [name, style] : series) {
    const auto& [colour, value] = style;
    std::string points;
    for (const config::ServeCurvePoint& p : r.curve()) {
      absl::StrAppend(&points, points.empty() ? "" : " ", Px(X(p.output_tokens_per_s())), ",",
                      Px(Y(value(p))));
    }
    absl::StrAppend(&out, "<polyline points=\"", points, "\" fill=\"none\" stroke=\"", colour,
                    "\" stroke-width=\"1.5\"/>\n");
    for (const config::ServeCurvePoint& p : r.curve()) {
      absl::StrAppend(&out, "<circle cx=\"", Px(X(p.output_tokens_per_s())), "\" cy=\"",
                      Px(Y(value(p))), "\" r=\"3\" fill=\"", colour, "\"><title>",
                      FixedNumber(p.request_rate_per_s(), 2), " req/s: ", FixedNumber(value(p), 2),
                      " ", HtmlEscape(unit), "</title></circle>\n");
    }
    absl::StrAppend(&out, "<text x=\"", Px(legend_x), "\" y=\"", Px(a.top + 12), "\" fill=\"",
                    colour, "\">", HtmlEscape(name), "</text>\n");
    legend_x += 120;
  }
  if (target > 0) {
    absl::StrAppend(&out, "<line class=\"target\" x1=\"", Px(a.left), "\" x2=\"",
                    Px(a.left + a.width), "\" y1=\"", Px(Y(target)), "\" y2=\"", Px(Y(target)),
                    "\" stroke=\"#888\" stroke-dasharray=\"6 4\"/><text x=\"",
                    Px(a.left + a.width - 4), "\" y=\"", Px(Y(target) - 4),
                    "\" text-anchor=\"end\" fill=\"#555\">target ", FixedNumber(target, 1), " ",
                    HtmlEscape(unit), "</text>\n");
  }
  absl::StrAppend(&out, "<circle class=\"asked\" cx=\"", Px(X(r.output_tokens_per_s())), "\" cy=\"",
                  Px(Y(asked_y)), "\" r=\"5\" fill=\"#c00\"><title>this run</title>",
                  "</circle>\n</svg>\n");
  return out;
}

}  // namespace

std::string RenderServeReport(const config::ServeResult& r) {
  const std::string title = absl::StrCat("clustersim serve: ", r.name());
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", std::string(kPageBaseCss), std::string(kStyle),
      "</style>\n</head>\n<body>\n<h1>", HtmlEscape(title), "</h1>\n<p class=\"sub\">",
      HtmlEscape(absl::StrCat(r.model(), " on ", r.num_gpus(), " x ", r.gpu(), " (tp ",
                              r.tensor_parallel(), ", pp ", r.pipeline_parallel(), ", ",
                              r.replicas(), " replica(s)), weights ", r.weight_dtype(),
                              ", KV cache ", r.kv_cache_dtype(), ", ", r.workload())),
      "</p>\n");
  if (r.saturated()) {
    absl::StrAppend(&out, "<p class=\"saturated\">", HtmlEscape(r.saturation()), "</p>\n");
  }
  if (r.has_headline()) {
    absl::StrAppend(&out, "<p class=\"sub\">", HtmlEscape(r.headline()), "</p>\n");
  }
  absl::StrAppend(&out,
                  "<h2>Latency and throughput</h2>\n<table id=\"serve-summary\" class=\"kv\">\n",
                  Row("TTFT p50 / p90 / p99", Latency(r.ttft_ms())),
                  Row("TPOT p50 / p90 / p99", Latency(r.tpot_ms())),
                  Row("end-to-end p50 / p90 / p99", Latency(r.e2e_ms())),
                  Row("output tokens/s", FixedNumber(r.output_tokens_per_s(), 1)),
                  Row("total tokens/s", FixedNumber(r.total_tokens_per_s(), 1)),
                  Row("requests/s", FixedNumber(r.requests_per_s(), 3)),
                  Row("GPU busy", absl::StrCat(FixedNumber(100 * r.gpu_busy_fraction(), 1), "%")),
                  Row("model FLOPs utilisation",
                      absl::StrCat(FixedNumber(100 * r.model_flops_utilisation(), 1), "%")),
                  Row("communication (of busy time)",
                      absl::StrCat(FixedNumber(100 * r.communication_fraction(), 1), "%")),
                  Row("host (of busy time)",
                      absl::StrCat(FixedNumber(100 * r.host_fraction(), 1), "%")),
                  Row("mean batch (sequences)", FixedNumber(r.mean_batch_size(), 1)),
                  Row("capacity (req/s)", FixedNumber(r.capacity_requests_per_s(), 3)),
                  Row("saturation", r.saturation()));
  const config::ServeSustainable& st = r.sustainable();
  absl::StrAppend(
      &out,
      Row("sustainable rate", st.status() == "found" || st.status() == "capacity"
                                  ? absl::StrCat(FixedNumber(st.max_request_rate_per_s(), 3),
                                                 " req/s (", st.status(), ")")
                                  : st.status()),
      Row("$ / million output tokens", FixedNumber(r.cost().usd_per_million_output_tokens(), 3)),
      Row("price", absl::StrCat(FixedNumber(r.cost().usd_per_gpu_hour(), 2), " $/GPU-hour (",
                                r.cost().price_source(), ")")),
      Row("energy per output token",
          absl::StrCat(FixedNumber(r.cost().joules_per_output_token(), 2), " J")),
      "</table>\n");
  const config::ServeMemory& m = r.memory();
  absl::StrAppend(
      &out, "<h2>Memory of one GPU</h2>\n<table id=\"serve-memory\" class=\"kv\">\n",
      Row("capacity x utilisation", absl::StrCat(FixedNumber(m.budget_gib(), 2), " GiB")),
      Row("weights", absl::StrCat(FixedNumber(m.weights_gib(), 2), " GiB")),
      Row("activations (peak step)", absl::StrCat(FixedNumber(m.activations_gib(), 2), " GiB")),
      Row("overheads", absl::StrCat(FixedNumber(m.overheads_gib(), 2), " GiB")),
      Row("KV cache", absl::StrCat(FixedNumber(m.kv_cache_gib(), 2), " GiB")),
      Row("KV bytes per token", absl::StrCat(m.kv_bytes_per_token())),
      Row("KV blocks", absl::StrCat(m.kv_blocks(), " x ", m.kv_block_size(), " tokens")),
      Row("concurrent sequences",
          absl::StrCat(m.max_concurrent_sequences(), " of ", m.sequence_length(), " tokens")),
      "</table>\n<p class=\"verdict\">", HtmlEscape(m.verdict()), "</p>\n");
  if (r.has_speculative()) {
    const config::ServeSpeculative& sp = r.speculative();
    absl::StrAppend(
        &out, "<h2>Speculative decoding</h2>\n<table id=\"serve-speculative\" class=\"kv\">\n",
        Row("drafter", sp.draft_model().empty()
                           ? sp.method()
                           : absl::StrCat(sp.method(), " (", sp.draft_model(), ")")),
        Row("drafted tokens per step (k)", absl::StrCat(sp.num_speculative_tokens())),
        Row("acceptance rate", FixedNumber(sp.acceptance_rate(), 3)),
        Row("tokens per step (simulated / expected)",
            absl::StrCat(FixedNumber(sp.mean_accepted_tokens_per_step(), 2), " / ",
                         FixedNumber(sp.expected_accepted_tokens_per_step(), 2))),
        Row("drafter weights / KV per token",
            absl::StrCat(FixedNumber(sp.drafter_weights_gib(), 2), " GiB / ",
                         sp.drafter_kv_bytes_per_token(), " B")),
        Row("TPOT p50 speed-up", absl::StrCat(FixedNumber(sp.tpot_speedup(), 2), "x (",
                                              FixedNumber(sp.tpot_p50_ms_without(), 2),
                                              " ms without)")),
        Row("end-to-end p50 speed-up", absl::StrCat(FixedNumber(sp.e2e_speedup(), 2), "x")),
        Row("capacity speed-up", absl::StrCat(FixedNumber(sp.capacity_speedup(), 2), "x")),
        "</table>\n<p class=\"sub\">", HtmlEscape(sp.assumptions()), "</p>\n");
  }
  if (r.curve_size() > 0) {
    using Series = std::vector<
        std::pair<std::string,
                  std::pair<std::string, std::function<double(const config::ServeCurvePoint&)>>>>;
    absl::StrAppend(
        &out, "<h2>Latency against throughput</h2>\n<p class=\"sub\">",
        "Each point re-simulates Poisson arrivals at 10%, 20%, ... 100% of the capacity.</p>\n",
        "<p class=\"sub\">Time per output token (ms)</p>\n",
        CurveSvg(
            "serve-curve-tpot", r, "ms",
            Series{{"TPOT p50",
                    {"#2b6cb0", [](const config::ServeCurvePoint& p) { return p.tpot_p50_ms(); }}},
                   {"TPOT p99",
                    {"#dd6b20", [](const config::ServeCurvePoint& p) { return p.tpot_p99_ms(); }}}},
            r.tpot_ms().p99(), st.target_tpot_ms()),
        "<p class=\"sub\">Time to first token (ms)</p>\n",
        CurveSvg(
            "serve-curve-ttft", r, "ms",
            Series{{"TTFT p99",
                    {"#2f855a", [](const config::ServeCurvePoint& p) { return p.ttft_p99_ms(); }}}},
            r.ttft_ms().p99(), st.target_ttft_ms()));
  }
  absl::StrAppend(&out, "<p class=\"sub\">", HtmlEscape(r.sources()), "</p>\n</body>\n</html>\n");
  return out;
}

std::string FormatServeSummary(const config::ServeResult& r) {
  auto line = [](std::string_view name, const std::string& value) {
    std::string padded(name);
    padded.resize(std::max<size_t>(padded.size() + 1, 28), ' ');
    return absl::StrCat("  ", padded, value, "\n");
  };
  const config::ServeMemory& m = r.memory();
  const config::ServeSustainable& st = r.sustainable();
  std::string out = absl::StrCat(
      "clustersim serve: ", r.name(), "\n",
      line("deployment", absl::StrCat(r.model(), " on ", r.num_gpus(), " x ", r.gpu(), ", tp ",
                                      r.tensor_parallel(), " pp ", r.pipeline_parallel(), ", ",
                                      r.replicas(), " replica(s)")),
      line("formats",
           absl::StrCat("weights ", r.weight_dtype(), ", KV cache ", r.kv_cache_dtype())),
      line(
          "memory / GPU",
          absl::StrCat("weights ", FixedNumber(m.weights_gib(), 2), " GiB, KV cache ",
                       FixedNumber(m.kv_cache_gib(), 2), " GiB (", m.kv_blocks(), " blocks, ",
                       m.max_concurrent_sequences(), " seqs of ", m.sequence_length(), " tokens)")),
      line("workload",
           absl::StrCat(r.workload(), ", ", r.num_requests(), " requests",
                        r.offered_request_rate_per_s() > 0
                            ? absl::StrCat(" at ", FixedNumber(r.offered_request_rate_per_s(), 3),
                                           " req/s")
                            : "",
                        r.has_concurrency() ? absl::StrCat(", ", r.concurrency(), " clients")
                                            : "")));
  if (r.has_headline()) absl::StrAppend(&out, line("headline", r.headline()));
  if (r.has_prefix_cache_hit_rate()) {
    absl::StrAppend(
        &out, line("prefix cache", absl::StrCat(FixedNumber(100 * r.prefix_cache_hit_rate(), 1),
                                                "% of prompt tokens hit")));
  }
  absl::StrAppend(
      &out, line("TTFT p50/p90/p99", Latency(r.ttft_ms())),
      line("TPOT p50/p90/p99", Latency(r.tpot_ms())),
      line("end-to-end p50/p90/p99", Latency(r.e2e_ms())),
      line("output tokens/s",
           absl::StrCat(FixedNumber(r.output_tokens_per_s(), 1), " (",
                        FixedNumber(r.output_tokens_per_s_per_gpu(), 1), " per GPU)")),
      line("total tokens/s", FixedNumber(r.total_tokens_per_s(), 1)),
      line("GPU busy / MFU", absl::StrCat(FixedNumber(100 * r.gpu_busy_fraction(), 1), "% / ",
                                          FixedNumber(100 * r.model_flops_utilisation(), 1), "%")),
      line("communication", absl::StrCat(FixedNumber(100 * r.communication_fraction(), 1),
                                         "% of busy time (TP all-reduces, stage sends)")),
      line("host", absl::StrCat(FixedNumber(100 * r.host_fraction(), 1),
                                "% of busy time (per-iteration CPU work the GPUs wait for)")),
      line("mean batch",
           absl::StrCat(FixedNumber(r.mean_batch_size(), 1), " sequences, ", r.iterations(),
                        " iterations, ", r.preemptions(), " preemptions")),
      line("capacity",
           absl::StrCat(FixedNumber(r.capacity_requests_per_s(), 3), " req/s, ",
                        FixedNumber(r.capacity_output_tokens_per_s(), 1), " output tokens/s")),
      line("saturation", r.saturation()));
  if (st.status() == "found" || st.status() == "capacity") {
    absl::StrAppend(&out, line("sustainable rate",
                               absl::StrCat(FixedNumber(st.max_request_rate_per_s(), 3), " req/s (",
                                            st.status(), "; ", st.detail(), ")")));
  } else {
    absl::StrAppend(&out, line("sustainable rate", absl::StrCat(st.status(), ": ", st.detail())));
  }
  if (r.has_speculative()) {
    const config::ServeSpeculative& sp = r.speculative();
    absl::StrAppend(
        &out,
        line("speculative decoding",
             absl::StrCat(sp.method(),
                          sp.draft_model().empty() ? "" : absl::StrCat(" (", sp.draft_model(), ")"),
                          ", k ", sp.num_speculative_tokens(), ", acceptance ",
                          FixedNumber(sp.acceptance_rate(), 2), ": ",
                          FixedNumber(sp.mean_accepted_tokens_per_step(), 2),
                          " tokens per step (expected ",
                          FixedNumber(sp.expected_accepted_tokens_per_step(), 2), ")")),
        line("  vs without",
             absl::StrCat("TPOT p50 ", FixedNumber(sp.tpot_speedup(), 2), "x (",
                          FixedNumber(sp.tpot_p50_ms_without(), 2), " ms without), end-to-end p50 ",
                          FixedNumber(sp.e2e_speedup(), 2), "x, capacity ",
                          FixedNumber(sp.capacity_speedup(), 2), "x")));
  }
  absl::StrAppend(
      &out,
      line("$ / million output tokens",
           r.cost().usd_per_gpu_hour() > 0
               ? absl::StrCat(FixedNumber(r.cost().usd_per_million_output_tokens(), 3), " (",
                              FixedNumber(r.cost().usd_per_gpu_hour(), 2), " $/GPU-hour, ",
                              r.cost().price_source(), ")")
               : absl::StrCat("n/a: no catalog price for ", r.gpu(),
                              "; set --usd-per-gpu-hour (pricing.usd_per_gpu_hour)")),
      line("energy", absl::StrCat(FixedNumber(r.cost().joules_per_output_token(), 2),
                                  " J per output token, ", FixedNumber(r.cost().energy_kwh(), 4),
                                  " kWh (at ", FixedNumber(r.cost().power_w(), 0), " W)")));
  return out;
}

}  // namespace clustersim::viz
