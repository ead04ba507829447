// `clustersim serve [SCENARIO] [flags]`: load the scenario, override its
// `inference` section (and model, cluster, price) from flags, resolve,
// simulate serving, and print the summary (text) or the ServeResult (JSON);
// --trace and --report write files atomically.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/parse_args.h"
#include "cli/serve_flags.h"
#include "scenarios/serve/deployment_search.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "scenarios/serve/serve_disagg_runner.h"
#include "scenarios/serve/serve_resolve.h"
#include "scenarios/serve/serve_runner.h"
#include "sim/atomic_file.h"
#include "viz/deployment_search_report.h"
#include "viz/serve_disagg_summary.h"
#include "viz/serve_report.h"

namespace clustersim::cli {
namespace {

// Writes `report` to report_path when one is given, then `result` as JSON or
// as `text` followed by `footer`.
template <typename Result>
absl::Status WriteServeOutput(const Result& result, const std::string& format,
                              const std::string& report_path, const std::string& report,
                              const std::string& text, const std::string& footer, CommandIo& io) {
  if (!report_path.empty()) {
    if (absl::Status st = sim::WriteFileAtomically(report_path, report); !st.ok()) return st;
  }
  if (format == "json") {
    absl::StatusOr<std::string> json = ToJson(result);
    if (!json.ok()) return json.status();
    *io.out << *json;
  } else {
    *io.out << text << footer;
  }
  return absl::OkStatus();
}

// A scenario with inference.disaggregated: two pools, the KV transfers
// between them, goodput, and (--disagg-search) the ratio search.
absl::Status ServeDisaggregated(const config::Scenario& scenario, const std::string& format,
                                bool files, CommandIo& io) {
  if (files) {
    return absl::InvalidArgumentError(
        "--trace and --report are not available for a disaggregated deployment "
        "(inference.disaggregated); drop them or use --format json");
  }
  absl::StatusOr<scenarios::ResolvedDisagg> resolved = scenarios::ResolveDisagg(scenario);
  if (!resolved.ok()) return resolved.status();
  absl::StatusOr<config::ServeResult> result =
      scenarios::RunDisaggServe(*resolved, scenario, {.control = io.control});
  if (!result.ok()) return result.status();
  return WriteServeOutput(*result, format, "", "", viz::FormatDisaggSummary(*result), "", io);
}

absl::Status ServeSearch(const config::Scenario& scenario, const std::string& format,
                         const std::string& report_path, CommandIo& io) {
  absl::StatusOr<config::DeploymentSearchResult> result =
      scenarios::SearchDeployments(scenario, io.control ? &io.control->cancel : nullptr);
  if (!result.ok()) return result.status();
  return WriteServeOutput(
      *result, format, report_path,
      report_path.empty() ? "" : viz::RenderDeploymentSearchReport(*result),
      viz::FormatDeploymentSearch(*result),
      report_path.empty() ? "" : absl::StrCat("  report    ", report_path, "\n"), io);
}

}  // namespace

absl::Status ServeCommand(const Args& args, CommandIo& io) {
  absl::StatusOr<ServeFlags> flags = ParseServeFlags(args);
  if (!flags.ok()) return flags.status();
  if (flags->help) {
    *io.out << flags->help_text;
    return absl::OkStatus();
  }
  const std::string& format = flags->format;
  const std::string& trace_path = flags->trace_path;
  const std::string& report_path = flags->report_path;
  absl::StatusOr<config::Scenario> loaded = LoadBaseScenario(flags->scenario_path, io);
  if (!loaded.ok()) return loaded.status();
  config::Scenario scenario = *std::move(loaded);
  if (absl::Status st = ApplyServeFlags(*flags, &scenario); !st.ok()) return st;
  if (scenario.inference().has_deployment_search() &&
      (!scenario.inference().deployment_search().has_enabled() ||
       scenario.inference().deployment_search().enabled())) {
    if (!trace_path.empty() || flags->disagg_search || flags->disagg_search_gpus) {
      return absl::InvalidArgumentError(
          "--trace, --disagg-search and --disagg-search-gpus do not apply to the deployment "
          "search (--search, inference.deployment_search); drop them");
    }
    return ServeSearch(scenario, format, report_path, io);
  }
  if (flags->disagg_search || flags->disagg_search_gpus) {
    if (!scenario.inference().has_disaggregated()) {
      return absl::InvalidArgumentError(
          "--disagg-search needs a disaggregated deployment: add inference.disaggregated "
          "{ prefill {...} decode {...} } to the scenario");
    }
    config::DisaggSearch* search =
        scenario.mutable_inference()->mutable_disaggregated()->mutable_search();
    search->set_enabled(true);
    if (flags->disagg_search_gpus) search->set_total_gpus(*flags->disagg_search_gpus);
  }
  if (scenario.inference().has_disaggregated()) {
    return ServeDisaggregated(scenario, format, !trace_path.empty() || !report_path.empty(), io);
  }
  absl::StatusOr<scenarios::ResolvedServe> resolved = scenarios::ResolveServe(scenario);
  if (!resolved.ok()) return resolved.status();
  const scenarios::ServeOptions options{.trace_path = trace_path,
                                        .curve = !flags->no_curve || !report_path.empty(),
                                        .control = io.control};
  absl::StatusOr<config::ServeResult> result = scenarios::RunServe(*resolved, options);
  if (!result.ok()) return result.status();
  std::string footer;
  if (!trace_path.empty())
    absl::StrAppend(&footer, "  trace                       ", trace_path, "\n");
  if (!report_path.empty()) {
    absl::StrAppend(&footer, "  report                      ", report_path, "\n");
  }
  return WriteServeOutput(*result, format, report_path,
                          report_path.empty() ? "" : viz::RenderServeReport(*result),
                          viz::FormatServeSummary(*result), footer, io);
}

int ServeCommand(const Args& args) { return RunOnStdIo(ServeCommand, args); }

}  // namespace clustersim::cli
