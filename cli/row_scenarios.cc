#include "cli/row_scenarios.h"

#include <filesystem>
#include <utility>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/text_format.h"
#include "sim/atomic_file.h"

namespace clustersim::cli {
namespace {

std::string FileName(const std::string& id) {
  std::string name = id;
  for (char& c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return name + ".textproto";
}

// Text on comment lines: every line break starts a new "# " line.
std::string Commented(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\n", "\n#   "}});
}

}  // namespace

absl::Status PrepareScenarioDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--write-scenarios ", dir, " is not a directory that can be created (",
        ec ? ec.message() : "a file of that name exists", "); give a new or existing directory"));
  }
  return absl::OkStatus();
}

std::vector<RowScenario> TrainingRowScenarios(const std::vector<scenarios::ValidationRow>& rows) {
  std::vector<RowScenario> out;
  for (const scenarios::ValidationRow& r : rows) {
    RowScenario x{.id = r.id,
                  .source = r.source,
                  .metric = r.metric,
                  .measured = r.measured,
                  .not_run = r.reason,
                  .assumptions = r.assumptions,
                  .scenario = r.scenario,
                  .command = "run"};
    if (r.supported) {
      x.predicted = r.predicted;
      x.error_pct = 100 * r.error;
    }
    x.derivation = r.metric == "iteration_time_s"
                       ? "the step time of `clustersim run` on this file"
                       : "derived from the step time of `clustersim run` on this file in the "
                         "source's own convention";
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<RowScenario> ServingRowScenarios(
    const std::vector<scenarios::InferenceValidationRow>& rows) {
  std::vector<RowScenario> out;
  for (const scenarios::InferenceValidationRow& r : rows) {
    RowScenario x{.id = r.run.id,
                  .source = r.run.source,
                  .metric = r.run.metric,
                  .measured = r.run.measured,
                  .predicted = r.predicted,
                  .error_pct = r.error_pct,
                  .not_run = r.not_run,
                  .assumptions = absl::StrJoin(r.run.assumptions, "; "),
                  .command = "serve",
                  .derivation =
                      r.run.metric == "speedup_vs_no_spec"
                          ? "the output rate of `clustersim serve --no-curve` on this file over "
                            "the rate without inference.speculative (two runs)"
                          : "read off the result of `clustersim serve --no-curve` on this file"};
    if (r.run.scenario) google::protobuf::TextFormat::PrintToString(*r.run.scenario, &x.scenario);
    out.push_back(std::move(x));
  }
  return out;
}

std::string RowScenarioText(const std::string& path, const std::string& table,
                            const RowScenario& row) {
  std::string out = absl::StrCat("# Validation row ", row.id, " (source ", row.source, ") of ",
                                 table, ".\n");
  absl::StrAppend(&out, "# measured ", row.metric, " = ", absl::StrFormat("%.6g", row.measured),
                  "\n");
  if (row.predicted) {
    absl::StrAppend(&out, "# predicted ", absl::StrFormat("%.6g", *row.predicted), " (",
                    absl::StrFormat("%+.1f", row.error_pct), "%): ", row.derivation, "\n");
  } else {
    absl::StrAppend(&out, "# not run: ", Commented(row.not_run), "\n");
  }
  if (!row.assumptions.empty()) {
    absl::StrAppend(&out, "# assumptions: ", Commented(row.assumptions), "\n");
  }
  absl::StrAppend(&out, "# rerun: clustersim ", row.command, " ", path,
                  row.command == "serve" ? " --no-curve" : "", "\n",
                  "# proto-file: scenarios/proto/scenario.proto\n",
                  "# proto-message: clustersim.config.Scenario\n", row.scenario);
  return out;
}

absl::StatusOr<int> WriteRowScenarios(const std::string& dir, const std::string& table,
                                      const std::vector<RowScenario>& rows) {
  int written = 0;
  for (const RowScenario& row : rows) {
    if (row.scenario.empty()) continue;
    const std::string path = (std::filesystem::path(dir) / FileName(row.id)).string();
    if (absl::Status s = sim::WriteFileAtomically(path, RowScenarioText(path, table, row));
        !s.ok()) {
      return s;
    }
    ++written;
  }
  return written;
}

}  // namespace clustersim::cli
