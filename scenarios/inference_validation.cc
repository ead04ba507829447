#include "scenarios/inference_validation.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace clustersim::scenarios {

absl::StatusOr<double> PredictServingMetric(const config::Scenario& scenario,
                                            std::string_view metric) {
  // The seam to the serving simulator (`clustersim serve`), wired at merge.
  return absl::UnimplementedError(absl::StrCat(
      "the serving simulator (`clustersim serve`) is not part of this build; ", scenario.name(),
      "'s ", std::string(metric), " is predicted once it is merged"));
}

absl::StatusOr<InferenceValidationReport> ValidateInferenceTable(const CsvTable& table,
                                                                 std::string_view origin) {
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(table);
  if (!runs.ok()) {
    return absl::Status(runs.status().code(),
                        absl::StrCat(std::string(origin), ": ", runs.status().message()));
  }
  InferenceValidationReport report;
  report.origin = std::string(origin);
  double sum_abs = 0;
  for (InferenceRun& run : *runs) {
    InferenceValidationRow row;
    if (!run.scenario) {
      row.not_run = absl::StrCat("not supported: ", run.not_supported);
    } else {
      absl::StatusOr<double> p = PredictServingMetric(*run.scenario, run.metric);
      if (!p.ok()) {
        row.not_run = std::string(p.status().message());
      } else if (run.measured != 0) {
        row.predicted = *p;
        row.error_pct = (*p - run.measured) / run.measured * 100;
        sum_abs += std::abs(row.error_pct);
        ++report.ran;
      } else {
        row.not_run = "measured value is 0 (no relative error)";
      }
    }
    row.run = std::move(run);
    report.rows.push_back(std::move(row));
  }
  report.mape = report.ran > 0 ? sum_abs / report.ran : 0;
  return report;
}

std::string FormatInferenceValidationReport(const InferenceValidationReport& report,
                                            double target_pct) {
  std::string out = absl::StrCat("inference validation: ", report.origin, " (",
                                 report.rows.size(), " rows)\n");
  for (const InferenceValidationRow& r : report.rows) {
    absl::StrAppendFormat(&out, "%-16s %-28s measured %g %s\n", r.run.id, r.run.metric,
                          r.run.measured, r.run.unit);
    if (r.run.scenario) {
      absl::StrAppend(&out, "    setup: ", r.run.Setup(), "\n");
    }
    if (!r.run.assumptions.empty()) {
      absl::StrAppend(&out, "    assumes: ", absl::StrJoin(r.run.assumptions, "; "), "\n");
    }
    if (r.predicted) {
      absl::StrAppendFormat(&out, "    predicted %g %s (%+.1f%%)\n", *r.predicted, r.run.unit,
                            r.error_pct);
    } else {
      absl::StrAppend(&out, "    not run: ", r.not_run, "\n");
    }
  }
  int mapped = 0;
  for (const InferenceValidationRow& r : report.rows) mapped += r.run.scenario ? 1 : 0;
  absl::StrAppendFormat(&out, "rows: %d, mapped to a scenario: %d, not supported: %d, ran: %d\n",
                        static_cast<int>(report.rows.size()), mapped,
                        static_cast<int>(report.rows.size()) - mapped, report.ran);
  if (report.ran > 0) {
    absl::StrAppendFormat(&out, "MAPE %.1f%% over %d rows (target %.0f%%)\n", report.mape,
                          report.ran, target_pct);
  } else {
    absl::StrAppend(&out, "MAPE: n/a (no row ran)\n");
  }
  return out;
}

}  // namespace clustersim::scenarios
