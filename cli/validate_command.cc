// `clustersim validate FILE.csv...`: simulate every row of published
// measurement tables and print measured vs predicted, MAPE per source and
// overall (--format json: one object per row instead, for the Python module).
// Exit 1 when --max-mape is given and exceeded. A serving table
// (tests/validation/inference-runs.csv, detected by its header) is reported by
// scenarios/accuracy/inference_validation.h. With --leave-one-source-out the
// training tables are cross-validated by source instead
// (scenarios/accuracy/cross_validation.h).
#include <cmath>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/cross_validation_input.h"
#include "cli/parse_args.h"
#include "cli/row_scenarios.h"
#include "scenarios/accuracy/cross_validation.h"
#include "scenarios/accuracy/inference_validation.h"
#include "scenarios/accuracy/validation.h"
#include "scenarios/input/loader.h"
#include "sim/csv_table.h"
#include "traces/json_format.h"

namespace clustersim::cli {
namespace po = boost::program_options;

namespace {

// "NEMO2407=15" -> {NEMO2407: 15}; a malformed bound names the flag and the form.
absl::StatusOr<std::map<std::string, double>> ParseSourceBounds(
    const std::vector<std::string>& bounds) {
  std::map<std::string, double> out;
  for (const std::string& b : bounds) {
    const size_t eq = b.find('=');
    double pct = 0;
    if (eq == std::string::npos || eq == 0 || !absl::SimpleAtod(b.substr(eq + 1), &pct) ||
        pct < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--max-source-mape ", b, " is not SOURCE=PERCENT, e.g. --max-source-mape NEMO2407=15"));
    }
    out[b.substr(0, eq)] = pct;
  }
  return out;
}

// Prints a leave-one-source-out report; io.exit_code 1 when a --max bound is exceeded.
absl::Status CrossValidate(CommandIo& io, const std::vector<std::string>& files, int threads,
                           int stride, int offset, double target, double source_target,
                           double max_mape, bool check_band,
                           const std::map<std::string, double>& per_source,
                           const std::string& network_tier) {
  scenarios::CrossValidationOptions options{.threads = threads, .stride = stride, .offset = offset};
  options.network_tier = network_tier;
  if (io.control != nullptr) {
    io.control->Report(0, 1);  // running: a caller may stop it from now on
    options.cancel = &io.control->cancel;
    options.progress = [control = io.control](int done, int total) {
      control->Report(done, total);
    };
  }
  absl::StatusOr<scenarios::CrossValidation> cv = CrossValidateFiles(files, std::move(options));
  if (!cv.ok()) return cv.status();
  *io.out << scenarios::FormatCrossValidation(*cv, target, source_target);
  bool exceeded = false;
  if (max_mape >= 0 && cv->out_of_source_mape > max_mape) {
    *io.err << "clustersim: out-of-source MAPE above --max-mape " << max_mape << "%\n";
    exceeded = true;
  }
  if (check_band && !scenarios::BandCalibrated(*cv)) {
    *io.err << "clustersim: the 80% band holds " << 100 * cv->band_coverage_source_mean
            << "% of each source's out-of-source rows on average, outside 75-85% "
               "(--check-band)\n";
    exceeded = true;
  }
  for (const scenarios::SourceFold& f : cv->sources) {
    auto it = per_source.find(f.source);
    if (it != per_source.end() && f.out_of_source_mape > it->second) {
      *io.err << "clustersim: " << f.source << " out-of-source MAPE " << f.out_of_source_mape
              << "% above --max-source-mape " << it->second << "%\n";
      exceeded = true;
    }
  }
  if (exceeded) io.exit_code = 1;
  return absl::OkStatus();
}

// One row of --format json: a table row's measurement and prediction, or why
// it was not simulated. Non-finite numbers are null.
struct JsonRow {
  std::string file, id, source, metric;
  double measured = 0;
  std::optional<double> predicted, error_pct;
  std::string not_run, stack, gpu;
  int num_gpus = 0;
  // The simulation's memory verdict; null for a row that was not simulated
  // and for serving rows.
  std::optional<double> memory_gib, memory_capacity_gib;
  std::optional<bool> fits;
};

void AppendNumber(std::string* out, std::optional<double> v) {
  if (v && std::isfinite(*v)) {
    traces::AppendJsonDouble(out, *v);
  } else {
    *out += "null";
  }
}

void AppendJsonRow(std::string* out, const JsonRow& r) {
  *out += out->empty() ? "[\n  {" : ",\n  {";
  const std::pair<const char*, const std::string*> texts[] = {
      {"file", &r.file}, {"id", &r.id}, {"source", &r.source}, {"metric", &r.metric}};
  for (const auto& [key, value] : texts) {
    absl::StrAppend(out, "\"", key, "\": ");
    traces::AppendJsonString(out, *value);
    *out += ", ";
  }
  *out += "\"measured\": ";
  AppendNumber(out, r.measured);
  *out += ", \"predicted\": ";
  AppendNumber(out, r.predicted);
  *out += ", \"error_pct\": ";
  AppendNumber(out, r.error_pct);
  const std::pair<const char*, const std::string*> tail[] = {
      {"not_run", &r.not_run}, {"stack", &r.stack}, {"gpu", &r.gpu}};
  for (const auto& [key, value] : tail) {
    absl::StrAppend(out, ", \"", key, "\": ");
    traces::AppendJsonString(out, *value);
  }
  absl::StrAppend(out, ", \"num_gpus\": ", r.num_gpus, ", \"memory_gib\": ");
  AppendNumber(out, r.memory_gib);
  *out += ", \"memory_capacity_gib\": ";
  AppendNumber(out, r.memory_capacity_gib);
  absl::StrAppend(out, ", \"fits\": ", !r.fits ? "null" : *r.fits ? "true" : "false", "}");
}

}  // namespace

absl::Status ValidateCommand(const Args& args, CommandIo& io) {
  std::vector<std::string> files;
  double target = 10, max_mape = -1;
  int stride = 1, offset = 0;
  double host_overhead = -1, pipeline_p2p_host = -1, serving_host = -1, decode_attention = -1;
  double attention_factor = -1, gemm_factor = -1;
  std::vector<std::string> source_bounds;
  bool help = false, loso = false, check_band = false;
  int threads = 1;
  std::string format = "text", scenario_dir, network_tier;
  double source_target = 12;
  po::options_description d("usage: clustersim validate FILE.csv... [flags]");
  d.add_options()("target", po::value(&target)->default_value(10),
                  "MAPE target to report against (percent)")(
      "max-mape", po::value(&max_mape), "exit 1 when any table's overall MAPE exceeds this")(
      "max-source-mape", po::value(&source_bounds)->composing(),
      "SOURCE=PCT: exit 1 when that source's MAPE exceeds PCT (repeatable)")(
      "stride", po::value(&stride)->default_value(1), "run every n-th row of each table")(
      "offset", po::value(&offset)->default_value(0), "first row to run (0-based)")(
      "host-overhead-us", po::value(&host_overhead),
      "override every row's host launch time per op (microseconds)")(
      "serving-host-us", po::value(&serving_host),
      "override the inference rows' host time per serving iteration (microseconds)")(
      "serving-decode-attention-flops", po::value(&decode_attention),
      "override the inference rows' decode-attention FLOPs per SM per clock (0: off)")(
      "pipeline-p2p-host-us", po::value(&pipeline_p2p_host),
      "override the vTrain rows' pipeline-engine host time per send (microseconds)")(
      "framework-attention-factor", po::value(&attention_factor),
      "override every training row's in-framework fraction of the calibrated attention rate, "
      "in (0, 1]")(
      "framework-gemm-factor", po::value(&gemm_factor),
      "override every training row's fraction of the sustained GEMM rate, in (0, 1]")(
      "network-tier", po::value(&network_tier),
      "training rows: analytic (alpha-beta, the default) | flow (link contention)")(
      "leave-one-source-out", po::bool_switch(&loso),
      "training tables: refit each stack's GEMM factor without each source, predict it, and "
      "print out-of-source MAPE (--target is then the overall target, default 8)")(
      "source-target", po::value(&source_target)->default_value(12),
      "with --leave-one-source-out: the out-of-source MAPE every source must stay under")(
      "check-band", po::bool_switch(&check_band),
      "with --leave-one-source-out: exit 1 unless the 80% band holds 75-85% of each "
      "source's rows on average")("threads", po::value(&threads)->default_value(1),
                                  "with --leave-one-source-out: tables simulated in parallel")(
      "format", po::value(&format)->default_value("text"),
      "text | json (one object per table row: measured, predicted, error_pct or not_run; "
      "memory_gib, memory_capacity_gib and fits for training rows)")(
      "write-scenarios", po::value(&scenario_dir),
      "write each row's scenario to DIR/<id>.textproto (rerun it with clustersim run, or "
      "clustersim serve for a serving table)")(
      "help,h", po::bool_switch(&help), "show this help");
  po::options_description hidden;
  hidden.add_options()("file", po::value(&files));
  po::positional_options_description pos;
  pos.add("file", -1);
  po::options_description all;
  all.add(d).add(hidden);
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "validate", &vm); !s.ok()) return s;
  if (help) {
    *io.out << d;
    return absl::OkStatus();
  }
  if (files.empty()) {
    return absl::InvalidArgumentError(
        "validate needs at least one table, e.g. tests/validation/published-runs.csv");
  }
  if (stride < 1 || offset < 0) {
    return absl::InvalidArgumentError("--stride must be at least 1 and --offset at least 0");
  }
  if (vm.count("framework-attention-factor") && !(attention_factor > 0 && attention_factor <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--framework-attention-factor=", attention_factor,
                     " must be in (0, 1] (1 = the standalone attention kernel's rate)"));
  }
  if (vm.count("framework-gemm-factor") && !(gemm_factor > 0 && gemm_factor <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--framework-gemm-factor=", gemm_factor,
                     " must be in (0, 1] (1 = the GEMM ceiling's benchmark rate)"));
  }
  if (vm.count("network-tier") && network_tier != "analytic" && network_tier != "flow") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--network-tier=", network_tier, " is not known; use analytic or flow"));
  }
  absl::StatusOr<std::map<std::string, double>> per_source = ParseSourceBounds(source_bounds);
  if (!per_source.ok()) return per_source.status();
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", format, " is not known; use text or json"));
  }
  const bool json = format == "json";
  if (loso && json) {
    return absl::InvalidArgumentError(
        "--format json lists table rows; --leave-one-source-out prints text only");
  }
  if (loso && !scenario_dir.empty()) {
    return absl::InvalidArgumentError(
        "--write-scenarios writes the rows of one validation; run it without "
        "--leave-one-source-out");
  }
  if (!scenario_dir.empty()) {
    if (absl::Status s = PrepareScenarioDir(scenario_dir); !s.ok()) return s;
  }
  if (loso) {
    if (vm["target"].defaulted()) target = 8;
    return CrossValidate(io, files, threads, stride, offset, target, source_target, max_mape,
                         check_band, *per_source, network_tier);
  }
  bool exceeded = false;
  std::string rows;  // --format json
  size_t tables_done = 0;
  for (const std::string& f : files) {
    if (io.control != nullptr) io.control->Report(tables_done++, files.size());
    absl::StatusOr<std::string> text = scenarios::ReadFile(f);
    if (!text.ok()) return text.status();
    absl::StatusOr<sim::CsvTable> table = sim::ParseCsv(*text, f);
    if (!table.ok()) return table.status();
    if (scenarios::IsInferenceRunsTable(*table)) {
      // Serving rows: every row with its setup and prediction or reason.
      absl::StatusOr<scenarios::InferenceValidationReport> inference =
          scenarios::ValidateInferenceTable(
              *table, f,
              {.stride = stride,
               .offset = offset,
               .host_us = serving_host,
               .decode_attention_flops_per_sm_cycle = decode_attention});
      if (!inference.ok()) return inference.status();
      if (!scenario_dir.empty()) {
        absl::StatusOr<int> written =
            WriteRowScenarios(scenario_dir, f, ServingRowScenarios(inference->rows));
        if (!written.ok()) return written.status();
        *io.err << "clustersim: wrote " << *written << " row scenarios to " << scenario_dir
                << "\n";
      }
      for (const scenarios::InferenceValidationRow& r : inference->rows) {
        if (!json) break;
        JsonRow row;
        row.file = f;
        row.id = r.run.id;
        row.source = r.run.source;
        row.metric = r.run.metric;
        row.measured = r.run.measured;
        row.predicted = r.predicted;
        if (r.predicted) row.error_pct = r.error_pct;
        row.not_run = r.not_run;
        AppendJsonRow(&rows, row);
      }
      if (!json) *io.out << scenarios::FormatInferenceValidationReport(*inference, target) << "\n";
      if (max_mape >= 0 && inference->ran > 0 && inference->mape > max_mape) {
        *io.err << "clustersim: validation MAPE above --max-mape " << max_mape << "%\n";
        exceeded = true;
      }
      continue;
    }
    absl::StatusOr<scenarios::ValidationReport> report =
        scenarios::ValidateTable(*table, f,
                                 {.stride = stride,
                                  .offset = offset,
                                  .host_overhead_us = host_overhead,
                                  .pipeline_p2p_host_us = pipeline_p2p_host,
                                  .framework_attention_factor = attention_factor,
                                  .framework_gemm_factor = gemm_factor,
                                  .network_tier = network_tier,
                                  .keep_scenarios = !scenario_dir.empty(),
                                  .cancel = io.control != nullptr ? &io.control->cancel : nullptr});
    if (!report.ok()) return report.status();
    if (!scenario_dir.empty()) {
      absl::StatusOr<int> written =
          WriteRowScenarios(scenario_dir, f, TrainingRowScenarios(report->rows));
      if (!written.ok()) return written.status();
      *io.err << "clustersim: wrote " << *written << " row scenarios to " << scenario_dir
              << "\n";
    }
    for (const scenarios::ValidationRow& r : report->rows) {
      if (!json) break;
      JsonRow row;
      row.file = f;
      row.id = r.id;
      row.source = r.source;
      row.metric = r.metric;
      row.measured = r.measured;
      if (r.supported) {
        row.predicted = r.predicted;
        row.error_pct = 100 * r.error;
      }
      row.not_run = r.reason;
      row.stack = r.stack;
      row.gpu = r.gpu;
      row.num_gpus = r.num_gpus;
      if (r.simulated) {
        row.memory_gib = r.memory_gib;
        row.memory_capacity_gib = r.memory_capacity_gib;
        row.fits = r.fits;
      }
      AppendJsonRow(&rows, row);
    }
    if (!json) *io.out << scenarios::FormatValidationReport(*report, target) << "\n";
    if (max_mape >= 0 && report->overall_mape > max_mape) {
      *io.err << "clustersim: validation MAPE above --max-mape " << max_mape << "%\n";
      exceeded = true;
    }
    for (const scenarios::SourceSummary& src : report->by_source) {
      auto it = per_source->find(src.source);
      if (it != per_source->end() && src.mape > it->second) {
        *io.err << "clustersim: " << src.source << " MAPE " << src.mape
                << "% above --max-source-mape " << it->second << "%\n";
        exceeded = true;
      }
    }
  }
  if (json) *io.out << (rows.empty() ? "[" : rows) << "\n]\n";
  if (exceeded) io.exit_code = 1;
  return absl::OkStatus();
}

int ValidateCommand(const Args& args) { return RunOnStdIo(ValidateCommand, args); }

}  // namespace clustersim::cli
