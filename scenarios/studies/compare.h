// File: scenarios/studies/compare.h
//
// `clustersim compare`: scenarios and variants of them, simulated one after
// another and put side by side (scenarios/studies/study_table.h).
//
// Cases: every scenario file as given, and for each scenario every --variant
// ("tp=4,mbs=2", scenario_edit.h syntax) applied on top of it. --set
// assignments apply to every case first (e.g. train_tokens=1e12). Labels: the
// scenario file's name, then "name [variant]".
//
// Example:
//   CompareRequest req{.scenario_paths = {"a.textproto"}, .variants = {"tp=4", "pp=2"}};
//   absl::StatusOr<std::vector<StudyRow>> rows = RunCompare(req);
#ifndef CLUSTERSIM_SCENARIOS_STUDIES_COMPARE_H_
#define CLUSTERSIM_SCENARIOS_STUDIES_COMPARE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/run_control.h"
#include "scenarios/studies/study_table.h"

namespace clustersim::scenarios {

struct CompareRequest {
  std::vector<std::string> scenario_paths;  // at least one
  std::vector<std::string> sets;            // "field=value", every case
  std::vector<std::string> variants;        // "field=value,...", one case each per scenario
  // Each case's simulation reports into it and stops when it is cancelled
  // (sim/run_control.h); null: none.
  sim::RunControl* control = nullptr;
};

struct CompareCase {
  std::string label;
  config::Scenario scenario;
};

// Loads the files and applies the edits. Errors name the file or the variant.
absl::StatusOr<std::vector<CompareCase>> BuildCompareCases(const CompareRequest& request);

// Resolves and simulates each case, in order. An error names the case.
absl::StatusOr<std::vector<StudyRow>> RunCompare(const CompareRequest& request);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_STUDIES_COMPARE_H_
