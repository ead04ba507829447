// File: cli/row_scenarios.h
//
// `clustersim validate --write-scenarios DIR`: every validation row's
// scenario as a file that `clustersim run` (training rows) or `clustersim
// serve` (serving rows) takes, headed by the row's measurement, prediction
// and assumptions, so that any row of the accuracy tables can be rerun,
// traced and varied by hand.
//
// Example:
//   absl::StatusOr<int> n =
//       WriteRowScenarios("rows", "published-runs.csv", TrainingRowScenarios(report.rows));
#ifndef CLUSTERSIM_CLI_ROW_SCENARIOS_H_
#define CLUSTERSIM_CLI_ROW_SCENARIOS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scenarios/accuracy/inference_validation.h"
#include "scenarios/accuracy/validation.h"

namespace clustersim::cli {

// One row as written: what the header says and the scenario that follows it.
struct RowScenario {
  std::string id, source, metric;
  double measured = 0;
  std::optional<double> predicted;  // set when the row ran
  double error_pct = 0;             // (predicted - measured) / measured x 100
  std::string not_run;              // why it did not run
  std::string assumptions;
  std::string scenario;  // text format; empty when the row never got one
  std::string command;   // "run" or "serve"
  // How the prediction follows from the command's result on the file.
  std::string derivation;
};

// The training rows (the scenario as simulated, ValidationOptions::keep_scenarios).
std::vector<RowScenario> TrainingRowScenarios(const std::vector<scenarios::ValidationRow>& rows);

// The serving rows (each mapped row's scenario, with the table's overrides).
std::vector<RowScenario> ServingRowScenarios(
    const std::vector<scenarios::InferenceValidationRow>& rows);

// Creates `dir` (and its parents) when missing; InvalidArgument naming the
// flag when it cannot, or when it is a file.
absl::Status PrepareScenarioDir(const std::string& dir);

// DIR/<id>.textproto for each row that has a scenario (written atomically,
// the id's characters outside [A-Za-z0-9._-] as '_'); returns how many.
absl::StatusOr<int> WriteRowScenarios(const std::string& dir, const std::string& table,
                                      const std::vector<RowScenario>& rows);

// The file's text: a comment header (row, table, measured, predicted or why
// not run, assumptions, how to rerun it) and the scenario.
std::string RowScenarioText(const std::string& path, const std::string& table,
                            const RowScenario& row);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_ROW_SCENARIOS_H_
