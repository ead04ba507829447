#include "viz/html_report.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"
#include "sim/atomic_file.h"
#include "viz/goodput_chart.h"
#include "viz/html_text.h"
#include "viz/pipeline_diagram.h"

namespace clustersim::viz {
namespace {

constexpr std::string_view kStyle = R"css(
body { font-family: sans-serif; margin: 16px 20px; color: #222; max-width: 1380px; }
h1 { font-size: 22px; margin: 0 0 4px 0; }
h2 { font-size: 17px; margin: 22px 0 6px 0; border-bottom: 1px solid #ddd; }
p.sub { margin: 2px 0; color: #555; }
table.numbers { border-collapse: collapse; }
table.numbers td { padding: 3px 14px 3px 0; vertical-align: top; }
table.numbers td.k { color: #555; white-space: nowrap; }
table.numbers td.v { font-weight: bold; padding-right: 36px; white-space: nowrap; }
table.numbers td.wide { white-space: normal; font-weight: normal; }
.bad { color: #c00; }
.good { color: #186a18; }
.legend { font-size: 12px; margin: 4px 0 0 0; }
.legend span { display: inline-block; vertical-align: middle; margin-right: 6px; }
.swatch { width: 14px; height: 12px; }
.swatch.idle { background: repeating-linear-gradient(45deg, #f4f4f4 0 3px, #d0d0d0 3px 5px); }
pre#scenario { background: #f6f6f6; padding: 8px; font-size: 12px; max-height: 480px;
               overflow: auto; }
)css";

// "tp" colour etc., shared with the pipeline diagram so that the breakdown and
// the schedule agree.
std::string Color(SpanPhase p, SpanKind k) { return std::string(SpanColor(p, k, 0)); }

void NumberRow(std::string* out, std::string_view k1, const std::string& v1, std::string_view k2,
               const std::string& v2) {
  absl::StrAppend(out, "<tr><td class=\"k\">", std::string(k1), "</td><td class=\"v\">", v1,
                  "</td><td class=\"k\">", std::string(k2), "</td><td class=\"v\">", v2,
                  "</td></tr>\n");
}

std::string NumbersTable(const config::Result& r) {
  const config::ExposedCommBreakdown& e = r.exposed_comm_breakdown_s();
  std::string out = "<table id=\"numbers\" class=\"numbers\">\n";
  const config::StepTimeInterval& band = r.step_time_interval_s();
  const std::string band_text =
      r.has_step_time_interval_s()
          ? absl::StrCat(" (80% band ", HumanSeconds(band.p10()), " – ", HumanSeconds(band.p90()),
                         ": ", HtmlEscape(band.category()),
                         band.validated() ? "" : ", outside every validated category", ")")
          : "";
  NumberRow(&out, "step time", HumanSeconds(r.step_time_s()) + band_text, "throughput",
            absl::StrCat(FixedNumber(r.tokens_per_s(), 0), " tokens/s (",
                         FixedNumber(r.tokens_per_s_per_gpu(), 1), " per GPU)"));
  NumberRow(&out, "model TFLOP/s per GPU",
            absl::StrCat(FixedNumber(r.model_tflops_per_gpu(), 1), " (MFU ",
                         FixedNumber(100 * r.mfu(), 1), "%)"),
            "hardware TFLOP/s per GPU",
            absl::StrCat(FixedNumber(r.hardware_tflops_per_gpu(), 1), " (HFU ",
                         FixedNumber(100 * r.hfu(), 1), "%)"));
  NumberRow(&out, "pipeline bubble", absl::StrCat(FixedNumber(100 * r.bubble_ratio(), 1), "%"),
            "exposed communication",
            absl::StrCat(HumanSeconds(r.exposed_comm_s()), " (tp ", HumanSeconds(e.tp_s()),
                         ", pp ", HumanSeconds(e.pp_s()), ", dp ", HumanSeconds(e.dp_s()), ")"));
  NumberRow(&out, "memory per GPU",
            absl::StrCat(FixedNumber(r.peak_memory_gib(), 1), " of ",
                         FixedNumber(r.memory_capacity_gib(), 1), " GiB: ",
                         r.fits_in_memory() ? "<span class=\"good\">fits</span>"
                                            : "<span class=\"bad\">DOES NOT FIT</span>"),
            "cost", absl::StrCat("$", FixedNumber(r.cost().usd_per_step(), 4), " per step at $",
                                 FixedNumber(r.cost().usd_per_gpu_hour(), 2), " per GPU-hour"));
  NumberRow(&out, "micro-batches", absl::StrCat(r.num_microbatches()), "data-parallel size",
            absl::StrCat(r.data_parallel_size()));
  if (r.has_energy()) {
    const config::StepEnergy& en = r.energy();
    NumberRow(&out, "energy per step",
              absl::StrCat(FixedNumber(en.energy_per_step_j() / 1000, 2), " kJ (",
                           FixedNumber(en.average_power_w_per_gpu(), 0), " W average per GPU)"),
              "power limit",
              absl::StrCat(FixedNumber(en.power_cap_w(), 0), " W per GPU",
                           en.capped() ? absl::StrCat(": compute-bound kernels at ",
                                                      FixedNumber(100 * en.compute_clock_ratio(), 1),
                                                      "% clock")
                                       : " (default)",
                           en.energy_to_train_kwh() > 0
                               ? absl::StrCat("; ", FixedNumber(en.energy_to_train_kwh(), 0),
                                              " kWh to train")
                               : ""));
  }
  absl::StrAppend(&out, "<tr><td class=\"k\">simulated</td><td class=\"v wide\" colspan=\"3\">",
                  FixedNumber(r.simulated_tasks(), 0), " tasks, ",
                  FixedNumber(r.simulated_events(), 0), " events; ",
                  HtmlEscape(r.cost_model_source()), "</td></tr>\n");
  out += "</table>\n";
  return out;
}

std::string Header(const config::Result& r) {
  const config::Scenario& s = r.scenario();
  const config::ParallelismConfig& p = s.parallelism();
  std::string out =
      absl::StrCat("<h1>clustersim report: ", HtmlEscape(s.name()), "</h1>\n");
  if (!s.description().empty()) {
    absl::StrAppend(&out, "<p class=\"sub\">", HtmlEscape(s.description()), "</p>\n");
  }
  absl::StrAppend(
      &out, "<p class=\"sub\">model ",
      HtmlEscape(s.model().has_preset() ? s.model().preset() : std::string("custom")), " (",
      s.model().num_layers(), " layers, hidden ", s.model().hidden_size(), ", seq ",
      s.model().seq_length(), ") on ", s.cluster().num_gpus(), " x ",
      HtmlEscape(s.cluster().gpu()), "; tp ", p.tensor_model_parallel_size(), ", pp ",
      p.pipeline_model_parallel_size(), ", cp ", p.context_parallel_size(), ", dp ",
      r.data_parallel_size(), ", micro-batch ", s.training().micro_batch_size(),
      ", global batch ", s.training().global_batch_size(), ", schedule ",
      HtmlEscape(p.pipeline_schedule()), "</p>\n");
  return out;
}

}  // namespace

std::vector<BarSegment> StepBreakdown(const config::Result& r, const Timeline& timeline) {
  int64_t optimizer_ps = 0;
  for (const auto& [group, g] : timeline.groups()) {
    int64_t sum = 0;
    for (const auto& [lane, l] : g.lanes) {
      for (const TimelineSpan& s : l.spans) {
        if (s.kind == SpanKind::kCompute && s.phase == SpanPhase::kStep) {
          sum += s.end_ps - s.start_ps;
        }
      }
    }
    optimizer_ps = std::max(optimizer_ps, sum);
  }
  const double optimizer = std::min(static_cast<double>(optimizer_ps) * 1e-12, r.compute_s());
  const config::ExposedCommBreakdown& e = r.exposed_comm_breakdown_s();
  std::vector<BarSegment> segments = {
      {"compute", r.compute_s() - optimizer, Color(SpanPhase::kForward, SpanKind::kCompute)},
      {"optimizer", optimizer, Color(SpanPhase::kStep, SpanKind::kCompute)},
      {"exposed tp", e.tp_s(), Color(SpanPhase::kOther, SpanKind::kCommTp)},
      {"exposed cp", e.cp_s(), Color(SpanPhase::kOther, SpanKind::kCommCp)},
      {"exposed ep", e.ep_s(), Color(SpanPhase::kOther, SpanKind::kCommEp)},
      {"exposed dp", e.dp_s(), Color(SpanPhase::kOther, SpanKind::kCommDp)},
      {"exposed pp", e.pp_s(), Color(SpanPhase::kOther, SpanKind::kCommPp)},
      {"bubble", r.bubble_ratio() * r.step_time_s(), "#b9b9b9"},
  };
  double sum = 0;
  for (const BarSegment& s : segments) sum += s.value;
  segments.push_back({"other", std::max(r.step_time_s() - sum, 0.0), "#e0d6b8"});
  return segments;
}

std::vector<BarRow> MemoryBars(const config::Result& r) {
  const auto segments = [](const config::MemoryBreakdownGib& m) {
    return std::vector<BarSegment>{{"weights", m.weights(), "#3f6fa8"},
                                   {"gradients", m.gradients(), "#4b9a41"},
                                   {"optimizer", m.optimizer(), "#e45756"},
                                   {"activations", m.activations(), "#f58518"},
                                   {"other", m.other(), "#b9b9b9"}};
  };
  const auto verdict = [](bool fits) { return fits ? "fits" : "DOES NOT FIT"; };
  std::vector<BarRow> rows;
  for (const config::StageMemoryGib& st : r.memory_per_stage_gib()) {
    std::string note = absl::StrCat(FixedNumber(st.total_gib(), 1), " GiB: ", verdict(st.fits()));
    if (st.simulated_peak_gib() > 0) {
      absl::StrAppend(&note, "; simulated peak ", FixedNumber(st.simulated_peak_gib(), 1),
                      st.simulated_peak_gib() > r.memory_capacity_gib() ? " (over capacity)" : "");
    }
    rows.push_back({absl::StrCat("stage ", st.stage()), segments(st.breakdown()), note});
  }
  if (rows.empty()) {
    rows.push_back({"every GPU", segments(r.memory_breakdown_gib()),
                    absl::StrCat(FixedNumber(r.peak_memory_gib(), 1), " GiB: ",
                                 verdict(r.fits_in_memory()))});
  }
  return rows;
}

absl::StatusOr<std::string> RenderHtmlReport(const config::Result& r, const Timeline& timeline,
                                             const std::vector<MemoryCurve>& memory_curves) {
  std::string scenario_json;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  if (const auto st = google::protobuf::util::MessageToJsonString(r.scenario(), &scenario_json, o);
      !st.ok()) {
    return absl::InternalError(
        absl::StrCat("report: cannot print the scenario as JSON: ", std::string(st.message())));
  }
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>clustersim: ",
      HtmlEscape(r.scenario().name()), "</title>\n<style>", std::string(kStyle),
      "</style>\n</head>\n<body>\n");
  absl::StrAppend(&out, Header(r));
  absl::StrAppend(&out, "<h2>Key numbers</h2>\n", NumbersTable(r));
  absl::StrAppend(&out,
                  "<h2>Pipeline schedule</h2>\n<p class=\"sub\">Each band is one pipeline stage "
                  "(its first GPU); hatched gaps on the compute row are idle time: the bubble. "
                  "Hover a block for its times.</p>\n",
                  PipelineDiagramSvg(timeline), PipelineLegendHtml());
  StackedBars breakdown;
  breakdown.id = "breakdown";
  breakdown.unit = "s";
  breakdown.decimals = 4;
  breakdown.rows.push_back({"step", StepBreakdown(r, timeline), HumanSeconds(r.step_time_s())});
  absl::StrAppend(&out, "<h2>Where the step time goes</h2>\n", StackedBarsSvg(breakdown));
  StackedBars memory;
  memory.id = "memory";
  memory.unit = "GiB";
  memory.decimals = 1;
  memory.rows = MemoryBars(r);
  memory.marker = r.memory_capacity_gib();
  memory.marker_label = absl::StrCat("capacity ", FixedNumber(r.memory_capacity_gib(), 1), " GiB");
  absl::StrAppend(&out,
                  "<h2>Memory per pipeline stage</h2>\n<p class=\"sub\">Per GPU of each stage, "
                  "from the memory model (activations of the micro-batches 1F1B keeps in "
                  "flight); the simulated peak follows the schedule actually run.</p>\n",
                  StackedBarsSvg(memory));
  if (!memory_curves.empty()) {
    absl::StrAppend(&out,
                    "<h2>Memory in use over the step</h2>\n<p class=\"sub\">Static memory plus "
                    "the activations each forward allocates and its backward frees, on the "
                    "simulated timeline.</p>\n",
                    MemoryCurveSvg(memory_curves, r.memory_capacity_gib(), r.step_time_s()));
  }
  if (r.has_goodput()) {
    const config::Goodput& g = r.goodput();
    absl::StrAppend(
        &out, "<h2>The whole run, with failures</h2>\n<p class=\"sub\">",
        absl::StrFormat("One of %d simulated runs: failures (red) and planned stops (orange), "
                        "each with its restart (green), and every n-th checkpoint (grey); %.1f%% "
                        "effective training time over all runs.",
                        g.trials(), 100 * g.effective_training_time()),
        "</p>\n", GoodputTimelineSvg(g),
        "<p class=\"sub\">Time-to-train over the simulated runs.</p>\n", GoodputHistogramSvg(g));
  }
  absl::StrAppend(&out, "<h2>Scenario (resolved)</h2>\n<pre id=\"scenario\">",
                  HtmlEscape(scenario_json), "</pre>\n");
  absl::StrAppend(&out, "<p class=\"sub\">FLOP convention: ", HtmlEscape(r.flops_convention()),
                  "</p>\n<p class=\"sub\">Price source: ", HtmlEscape(r.cost().price_source()),
                  "</p>\n</body>\n</html>\n");
  return out;
}

absl::Status WriteHtmlReport(const std::string& path, const config::Result& result,
                             const Timeline& timeline,
                             const std::vector<MemoryCurve>& memory_curves) {
  absl::StatusOr<std::string> html = RenderHtmlReport(result, timeline, memory_curves);
  if (!html.ok()) return html.status();
  return sim::WriteFileAtomically(path, *html);
}

}  // namespace clustersim::viz
