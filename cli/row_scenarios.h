// File: cli/row_scenarios.h
//
// `clustersim validate --write-scenarios DIR`: every validation row's
// scenario as a file that `clustersim run` takes, headed by the row's
// measurement, prediction and assumptions, so that any row of the accuracy
// tables can be rerun, traced and varied by hand.
//
// Example:
//   absl::StatusOr<int> n = WriteRowScenarios("rows", "published-runs.csv", report.rows);
#ifndef CLUSTERSIM_CLI_ROW_SCENARIOS_H_
#define CLUSTERSIM_CLI_ROW_SCENARIOS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scenarios/accuracy/validation.h"

namespace clustersim::cli {

// Creates `dir` (and its parents) when missing; InvalidArgument naming the
// flag when it cannot, or when it is a file.
absl::Status PrepareScenarioDir(const std::string& dir);

// DIR/<id>.textproto for each row that got a scenario (written atomically,
// the id's characters outside [A-Za-z0-9._-] as '_'); returns how many.
absl::StatusOr<int> WriteRowScenarios(const std::string& dir, const std::string& table,
                                      const std::vector<scenarios::ValidationRow>& rows);

// The file's text: a comment header (row, table, measured, predicted or why
// not run, assumptions, how to rerun it) and the scenario.
std::string RowScenarioText(const std::string& path, const std::string& table,
                            const scenarios::ValidationRow& row);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_ROW_SCENARIOS_H_
