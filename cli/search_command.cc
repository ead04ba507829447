// `clustersim search [SCENARIO] --model M --gpu G --num-gpus N [flags]`: rank
// the feasible parallel strategies (scenarios/studies/search.h); --explain tells why
// one strategy is rejected; --report FILE.html draws the top-k. Timing and the progress bar go to stderr, so that
// stdout is the same for the same input.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/parse_args.h"
#include "scenarios/input/scenario_edit.h"
#include "scenarios/studies/search.h"
#include "scenarios/studies/study_report_rows.h"

namespace clustersim::cli {
namespace po = boost::program_options;
namespace {

// "a:b" or "a:b:step" -> a, a+step, ..., <= b; step defaults to `node`.
absl::StatusOr<std::vector<int>> ParseRange(const std::string& text, int node) {
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  int a = 0, b = 0, step = node;
  if ((parts.size() != 2 && parts.size() != 3) || !absl::SimpleAtoi(parts[0], &a) ||
      !absl::SimpleAtoi(parts[1], &b) || (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &step)) ||
      a < 1 || b < a || step < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num-gpus-range=", text, " is not a:b or a:b:step with 1 <= a <= b; e.g. 64:512:64"));
  }
  std::vector<int> out;
  for (int n = a; n <= b && out.size() <= 64; n += step) out.push_back(n);
  if (out.size() > 64) {
    return absl::InvalidArgumentError(absl::StrCat("--num-gpus-range=", text,
                                                   " has more than 64 sizes; use a larger step"));
  }
  return out;
}

void DrawProgress(size_t done, size_t total) {
  const int width = 40;
  const int filled = total ? static_cast<int>(width * done / total) : width;
  std::cerr << absl::StrFormat("\r[%s%s] %d/%d simulated", std::string(filled, '#'),
                               std::string(width - filled, ' '), done, total);
  if (done == total) std::cerr << "\n";
}

}  // namespace

absl::Status SearchCommand(const Args& args, CommandIo& io) {
  std::string scenario_path, model, gpu, node, range, explain, format, price_source, precision,
      report_path, search_precisions;
  std::optional<int> num_gpus, gbs, seq;
  std::optional<double> price, tokens;
  std::optional<int> trials;
  bool goodput = false;
  std::vector<std::string> sets;
  scenarios::SearchRequest req;
  bool help = false, no_progress = false;
  po::options_description visible("Options");
  visible.add_options()("model", po::value(&model), "model preset (clustersim list models)")(
      "gpu", po::value(&gpu), "GPU (clustersim list gpus)")(
      "node", po::value(&node), "node preset (clustersim list clusters)")(
      "num-gpus", po::value<int>()->notifier([&](int v) { num_gpus = v; }), "GPUs in the job")(
      "num-gpus-range", po::value(&range), "a:b[:step] GPU counts (step default 8)")(
      "global-batch-size", po::value<int>()->notifier([&](int v) { gbs = v; }),
      "sequences per step (default: the scenario's, else one per GPU)")(
      "seq-length", po::value<int>()->notifier([&](int v) { seq = v; }), "sequence length")(
      "precision", po::value(&precision),
      "bf16|fp16|fp8|nvfp4: the scenario's training precision")(
      "search-precisions", po::value(&search_precisions),
      "precisions to try, e.g. bf16,fp8,nvfp4; auto: the scenario's plus fp8 and nvfp4 where "
      "the GPU has them (default: the scenario's only)")(
      "price-source", po::value(&price_source), "price catalog entry (clustersim list prices)")(
      "usd-per-gpu-hour", po::value<double>()->notifier([&](double v) { price = v; }),
      "price per GPU-hour")(
      "train-tokens", po::value<double>()->notifier([&](double v) { tokens = v; }),
      "tokens of the run, for time-to-train and dollars, e.g. 1.5e13")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(),
      "field=value applied to the base scenario (repeatable, as compare --set), e.g. "
      "--set training.finetune=lora")(
      "goodput", po::bool_switch(&goodput),
      "simulate each strategy's whole run with failures and restarts (docs/goodput.md)")(
      "trials", po::value<int>()->notifier([&](int v) { trials = v; }),
      "goodput Monte Carlo trials per strategy (default 100)")(
      "rank-by", po::value(&req.rank_by)->default_value("time"),
      "time | cost | time-to-train | goodput-time-to-train | goodput-cost")(
      "budget-usd", po::value(&req.budget_usd)->default_value(0), "drop runs costing more")(
      "top-k", po::value(&req.top_k)->default_value(10), "strategies to print")(
      "threads", po::value(&req.threads)->default_value(
                     std::max(1, static_cast<int>(std::thread::hardware_concurrency()))),
      "simulation threads (default: all cores)")(
      "explain", po::value(&explain), "\"tp=2,pp=4,...\": why this strategy is rejected, or its result")(
      "format", po::value(&format)->default_value("text"), "text|csv|json")(
      "report", po::value(&report_path),
      "FILE.html: a table and a time-vs-cost scatter of the top-k strategies")(
      "no-progress", po::bool_switch(&no_progress), "no progress bar on stderr")(
      "help,h", po::bool_switch(&help), "show this help");
  po::options_description all;
  all.add(visible).add_options()("scenario", po::value(&scenario_path), "base scenario");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "search", &vm); !s.ok()) return s;
  if (help) {
    *io.out << "usage: clustersim search [SCENARIO] --model M --gpu G --num-gpus N [flags]\n\n"
               "Enumerates tp, pp, vp, cp, ep, micro-batch, recompute, optimizer sharding and\n"
               "schedule; rejects by divisibility and memory before simulating (a candidate too\n"
               "big without recompute also tries block recompute of the fewest layers per chunk\n"
               "that fit, rc-blockN); simulates the rest in parallel and ranks them. SCENARIO,\n"
               "if given, supplies the model, cluster, batch and pricing; flags override it.\n\n"
            << visible;
    return absl::OkStatus();
  }
  if (absl::Status s = CheckTableFormat(format); !s.ok()) return s;
  config::Scenario& base = req.base;
  absl::StatusOr<config::Scenario> loaded = LoadBaseScenario(scenario_path, io);
  if (!loaded.ok()) return loaded.status();
  base = *std::move(loaded);
  if (!model.empty()) base.mutable_model()->set_preset(model);
  if (!gpu.empty()) base.mutable_cluster()->set_gpu(gpu);
  if (!node.empty()) base.mutable_cluster()->set_node(node);
  if (gbs) base.mutable_training()->set_global_batch_size(*gbs);
  if (seq) base.mutable_model()->set_seq_length(*seq);
  if (!precision.empty()) base.mutable_training()->set_precision(precision);
  if (!price_source.empty()) base.mutable_pricing()->set_price_source(price_source);
  if (price) base.mutable_pricing()->set_usd_per_gpu_hour(*price);
  if (tokens) base.mutable_pricing()->set_train_tokens(*tokens);
  if (goodput || trials) {
    base.mutable_reliability()->set_enabled(true);
    if (!base.reliability().has_trials()) base.mutable_reliability()->set_trials(trials.value_or(100));
  }
  for (const std::string& assignment : sets) {
    if (absl::Status s = scenarios::SetScenarioField(assignment, &base); !s.ok()) return s;
  }
  if (!base.has_model() || (!base.model().has_preset() && !base.model().has_num_layers() &&
                            !base.model().has_model_config_file())) {
    return absl::InvalidArgumentError(
        "search needs a model: --model NAME (clustersim list models) or a SCENARIO file");
  }
  if (!base.cluster().has_gpu()) {
    return absl::InvalidArgumentError(
        "search needs a GPU: --gpu NAME (clustersim list gpus) or a SCENARIO file");
  }
  if (vm.count("search-precisions")) {
    req.precisions = absl::StrSplit(search_precisions, ',');
  }
  if (num_gpus && !range.empty()) {
    return absl::InvalidArgumentError("give --num-gpus or --num-gpus-range, not both");
  }
  if (num_gpus) {
    req.gpu_counts = {*num_gpus};
  } else if (!range.empty()) {
    absl::StatusOr<std::vector<int>> counts = ParseRange(range, 8);
    if (!counts.ok()) return counts.status();
    req.gpu_counts = *counts;
  } else if (base.cluster().has_num_gpus()) {
    req.gpu_counts = {base.cluster().num_gpus()};
  }
  if (!explain.empty()) {
    absl::StatusOr<std::string> text = scenarios::ExplainStrategy(req, explain);
    if (!text.ok()) return text.status();
    *io.out << *text;
    return absl::OkStatus();
  }
  if (!no_progress && io.terminal && isatty(STDERR_FILENO)) req.progress = DrawProgress;
  req.control = io.control;
  absl::StatusOr<scenarios::SearchReport> report = scenarios::RunSearch(req);
  if (!report.ok()) return report.status();
  absl::StatusOr<std::string> text = scenarios::FormatSearchReport(*report, format);
  if (!text.ok()) return text.status();
  *io.out << *text;
  if (!report_path.empty()) {
    std::vector<scenarios::ReportPoint> points;
    for (const scenarios::StudyRow& row : report->top) {  // "#1 tp2 pp1 dp2 mbs1 ..."
      points.push_back(scenarios::ReportPointOf(
          {absl::StrCat(row.label, " ",
                        scenarios::StrategyLabel(row.result.scenario(), row.show_precision)),
           row.result}));
    }
    const absl::Status s = scenarios::WriteStudyReport(
        report_path, points,
        {.title = "clustersim search",
         .subtitle = absl::StrCat("top ", points.size(), " of ", report->simulated,
                                  " simulated strategies (", report->enumerated,
                                  " enumerated), ranked by ", req.rank_by)});
    if (!s.ok()) return s;
  }
  const double total = report->prune_seconds + report->simulate_seconds;
  *io.err << absl::StrFormat(
      "search: %d enumerated, pruned in %.2f s; %d simulated in %.2f s on %d threads "
      "(%.1f strategies/s; CPU %.2f s, %.1f ms per strategy); %.2f s in all\n",
      report->enumerated, report->prune_seconds, report->simulated, report->simulate_seconds,
      req.threads,
      report->simulate_seconds > 0 ? report->simulated / report->simulate_seconds : 0.0,
      report->simulate_cpu_seconds,
      report->simulated > 0 ? 1e3 * report->simulate_cpu_seconds / report->simulated : 0.0, total);
  return absl::OkStatus();
}

int SearchCommand(const Args& args) { return RunOnStdIo(SearchCommand, args); }

}  // namespace clustersim::cli
