// `clustersim run [SCENARIO] [flags]`: load, override, resolve, simulate, and
// print the summary (text) or the result (JSON); --output-dir/--trace write
// files atomically.
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/progress_line.h"
#include "cli/run_flags.h"
#include "scenarios/input/resolve.h"
#include "scenarios/goodput/goodput.h"
#include "scenarios/input/train_cost.h"
#include "scenarios/run/runner.h"
#include "scenarios/run/step_energy.h"
#include "scenarios/run/stragglers.h"
#include "sim/atomic_file.h"
#include "viz/summary_text.h"

namespace clustersim::cli {

absl::Status RunCommand(const Args& args, CommandIo& io) {
  absl::StatusOr<RunFlags> flags = ParseRunFlags(args);
  if (!flags.ok()) return flags.status();
  if (flags->help) {
    *io.out << flags->help_text;
    return absl::OkStatus();
  }
  absl::StatusOr<config::Scenario> loaded = LoadBaseScenario(flags->scenario_path, io);
  if (!loaded.ok()) return loaded.status();
  config::Scenario scenario = *std::move(loaded);
  scenario.MergeFrom(flags->overrides);
  absl::StatusOr<scenarios::ResolvedScenario> resolved = scenarios::Resolve(scenario);
  if (!resolved.ok()) return resolved.status();

  scenarios::RunOptions options;
  options.trace_path = flags->trace_path;
  options.trace_format = flags->trace_format;
  std::string report_path = flags->report_path;
  if (!flags->trace_ranks.empty()) {
    absl::StatusOr<traces::IdRanges> r = traces::IdRanges::Parse(flags->trace_ranks, "--trace-ranks");
    if (!r.ok()) return r.status();
    options.trace_ranks = *r;
  }
  if (!flags->trace_steps.empty()) {
    absl::StatusOr<traces::IdRanges> r = traces::IdRanges::Parse(flags->trace_steps, "--trace-steps");
    if (!r.ok()) return r.status();
    options.trace_steps = *r;
  }
  absl::StatusOr<traces::TraceDetail> detail =
      traces::ParseTraceDetail(flags->trace_detail, "--trace-detail");
  if (!detail.ok()) return detail.status();
  options.trace_detail = *detail;
  options.fold_data_parallel = !flags->no_fold;
  if (flags->no_fold) options.fold_tensor_parallel_above_gpus = std::numeric_limits<int>::max();
  if (!flags->output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags->output_dir, ec);
    if (ec) {
      return absl::InvalidArgumentError(absl::StrCat("--output-dir ", flags->output_dir, ": ",
                                                     ec.message(), "; choose a writable folder"));
    }
    if (options.trace_path.empty()) {
      options.trace_path = flags->output_dir +
                           (options.trace_format == "perfetto" ? "/trace.pftrace" : "/trace.json");
    }
    if (report_path.empty()) report_path = flags->output_dir + "/report.html";
  }
  options.report = !report_path.empty();
  absl::StatusOr<scenarios::RunOutput> out;
  {
    ProgressLine progress(io, "tasks simulated");
    options.control = io.control;
    out = scenarios::RunScenarioWithReport(*resolved, options);
  }
  if (!out.ok()) return out.status();
  if (options.report) {
    if (auto s = sim::WriteFileAtomically(report_path, out->report_html); !s.ok()) return s;
  }
  const config::Result& result = out->result;
  absl::StatusOr<std::string> json = ToJson(result);
  if (!json.ok()) return json.status();
  if (!flags->output_dir.empty()) {
    if (auto s = sim::WriteFileAtomically(flags->output_dir + "/result.json", *json); !s.ok()) {
      return s;
    }
  }
  if (flags->format == "json") {
    *io.out << *json;
  } else {
    *io.out << viz::FormatSummary(result) << scenarios::FormatCostText(result)
            << scenarios::FormatEnergyText(result) << scenarios::FormatStragglersText(result)
            << scenarios::FormatGoodputText(result);
    if (!options.trace_path.empty())
      *io.out << "  trace                      " << options.trace_path << "\n";
    if (options.report) *io.out << "  report                     " << report_path << "\n";
    if (!flags->output_dir.empty()) {
      *io.out << "  result                     " << flags->output_dir << "/result.json\n";
    }
  }
  return absl::OkStatus();
}

int RunCommand(const Args& args) { return RunOnStdIo(RunCommand, args); }

}  // namespace clustersim::cli
