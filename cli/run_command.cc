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
#include "cli/run_flags.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/goodput/goodput.h"
#include "scenarios/input/train_cost.h"
#include "scenarios/run/runner.h"
#include "sim/atomic_file.h"
#include "viz/summary_text.h"

namespace clustersim::cli {

int RunCommand(const Args& args) {
  absl::StatusOr<RunFlags> flags = ParseRunFlags(args);
  if (!flags.ok()) return Fail(flags.status());
  if (flags->help) {
    std::cout << flags->help_text;
    return 0;
  }
  config::Scenario scenario;
  if (!flags->scenario_path.empty()) {
    absl::StatusOr<config::Scenario> loaded = scenarios::LoadScenarioFile(flags->scenario_path);
    if (!loaded.ok()) return Fail(loaded.status());
    scenario = *std::move(loaded);
  }
  scenario.MergeFrom(flags->overrides);
  absl::StatusOr<scenarios::ResolvedScenario> resolved = scenarios::Resolve(scenario);
  if (!resolved.ok()) return Fail(resolved.status());

  scenarios::RunOptions options;
  options.trace_path = flags->trace_path;
  options.trace_format = flags->trace_format;
  std::string report_path = flags->report_path;
  if (!flags->trace_ranks.empty()) {
    absl::StatusOr<traces::IdRanges> r = traces::IdRanges::Parse(flags->trace_ranks, "--trace-ranks");
    if (!r.ok()) return Fail(r.status());
    options.trace_ranks = *r;
  }
  if (!flags->trace_steps.empty()) {
    absl::StatusOr<traces::IdRanges> r = traces::IdRanges::Parse(flags->trace_steps, "--trace-steps");
    if (!r.ok()) return Fail(r.status());
    options.trace_steps = *r;
  }
  absl::StatusOr<traces::TraceDetail> detail =
      traces::ParseTraceDetail(flags->trace_detail, "--trace-detail");
  if (!detail.ok()) return Fail(detail.status());
  options.trace_detail = *detail;
  options.fold_data_parallel = !flags->no_fold;
  if (flags->no_fold) options.fold_tensor_parallel_above_gpus = std::numeric_limits<int>::max();
  if (!flags->output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags->output_dir, ec);
    if (ec) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "--output-dir ", flags->output_dir, ": ", ec.message(), "; choose a writable folder")));
    }
    if (options.trace_path.empty()) {
      options.trace_path = flags->output_dir +
                           (options.trace_format == "perfetto" ? "/trace.pftrace" : "/trace.json");
    }
    if (report_path.empty()) report_path = flags->output_dir + "/report.html";
  }
  options.report = !report_path.empty();
  absl::StatusOr<scenarios::RunOutput> out = scenarios::RunScenarioWithReport(*resolved, options);
  if (!out.ok()) return Fail(out.status());
  if (options.report) {
    if (auto s = sim::WriteFileAtomically(report_path, out->report_html); !s.ok()) return Fail(s);
  }
  const config::Result& result = out->result;
  absl::StatusOr<std::string> json = ToJson(result);
  if (!json.ok()) return Fail(json.status());
  if (!flags->output_dir.empty()) {
    if (auto s = sim::WriteFileAtomically(flags->output_dir + "/result.json", *json); !s.ok()) {
      return Fail(s);
    }
  }
  if (flags->format == "json") {
    std::cout << *json;
  } else {
    std::cout << viz::FormatSummary(result) << scenarios::FormatCostText(result)
              << scenarios::FormatGoodputText(result);
    if (!options.trace_path.empty()) std::cout << "  trace                      " << options.trace_path << "\n";
    if (options.report) std::cout << "  report                     " << report_path << "\n";
    if (!flags->output_dir.empty()) {
      std::cout << "  result                     " << flags->output_dir << "/result.json\n";
    }
  }
  return 0;
}

}  // namespace clustersim::cli
