// File: scenarios/accuracy/inference_validation.h
//
// `clustersim validate` on the inference table (tests/validation/
// inference-runs.csv): every row with its mapped setup and either
// "not run: <reason>" or the prediction, measured vs predicted error, and the
// MAPE over the rows that ran.
//
// Predictions go through one function, PredictServingMetric, which resolves
// the row's scenario and runs the serving simulator (scenarios/serve/serve_runner.h),
// as `clustersim serve` does.
//
// Example:
//   absl::StatusOr<InferenceValidationReport> r = ValidateInferenceTable(table, "runs.csv");
//   std::cout << FormatInferenceValidationReport(*r, /*target_pct=*/15);
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_VALIDATION_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_VALIDATION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/accuracy/inference_runs.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

// The serving simulator's value of `metric` (a name IsKnownServingMetric
// accepts, in the table's unit) for `scenario`, from one serving simulation;
// the simulator's error (e.g. a model that does not fit) otherwise.
absl::StatusOr<double> PredictServingMetric(const config::Scenario& scenario,
                                            std::string_view metric);

struct InferenceValidationRow {
  InferenceRun run;
  std::optional<double> predicted;  // set when the row ran
  std::string not_run;              // why it did not ("not supported: ..." or the simulator's error)
  double error_pct = 0;             // (predicted - measured) / measured x 100, when it ran
};

struct InferenceValidationReport {
  std::string origin;
  std::vector<InferenceValidationRow> rows;  // every selected row of the table, in order
  int ran = 0;
  double mape = 0;  // over the rows that ran; 0 when none did
};

// Which rows run, and an override for fits (tests/validation/
// fit_serving_host_overhead.sh): rows offset, offset + stride, ... (0-based,
// file order); host_us >= 0 replaces every row's host time per iteration,
// decode_attention_flops_per_sm_cycle >= 0 every row's decode-attention
// arithmetic rate (fit_serving_decode_attention.sh).
struct InferenceValidationOptions {
  int stride = 1;
  int offset = 0;
  double host_us = -1;
  double decode_attention_flops_per_sm_cycle = -1;
};

// Maps and predicts the selected rows (all by default); error only for a
// table without the columns.
absl::StatusOr<InferenceValidationReport> ValidateInferenceTable(
    const sim::CsvTable& table, std::string_view origin, const InferenceValidationOptions& options = {});

// Per row: id, metric, measured and unit, setup (with assumptions), then the
// prediction and error or "not run: ..."; then the summary line.
std::string FormatInferenceValidationReport(const InferenceValidationReport& report,
                                            double target_pct);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_VALIDATION_H_
