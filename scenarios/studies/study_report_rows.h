// File: scenarios/studies/study_report_rows.h
//
// `--report FILE.html` of `compare`, `search` and `sweep`: their results as
// rows of the HTML study report (viz/study_report.h), written atomically.
// When every row has a run length (pricing.train_tokens or train_steps) the
// scatter and the Pareto front are time to train against total dollars;
// otherwise step time against dollars per million tokens (the same axes as
// the sweep's printed front). Same rows, same bytes.
//
// Example:
//   std::vector<ReportPoint> points;
//   for (const StudyRow& r : rows) points.push_back(ReportPointOf(r));
//   absl::Status s = WriteStudyReport("study.html", points, {.title = "clustersim compare"});
#ifndef CLUSTERSIM_SCENARIOS_STUDIES_STUDY_REPORT_ROWS_H_
#define CLUSTERSIM_SCENARIOS_STUDIES_STUDY_REPORT_ROWS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scenarios/studies/study_table.h"
#include "viz/study_report.h"

namespace clustersim::scenarios {

// One candidate: its row with the run's time and dollars (zero without a run
// length), and the per-token cost used as the cost axis when there is none.
struct ReportPoint {
  viz::StudyRow row;
  double usd_per_million_tokens = 0;
  bool has_train = false;
  double memory_capacity_gib = -1;  // -1 when unknown (sweep lines)
};

ReportPoint ReportPointOf(const StudyRow& row);

// From one line of a sweep's PREFIX.jsonl (StudyJsonObject); nullopt for an
// {"label": ..., "error": ...} line.
std::optional<ReportPoint> ReportPointOfJson(const std::string& line);

// Renders and writes the report; InvalidArgument naming --report and the
// path when it cannot be written (nothing is left at the path then).
absl::Status WriteStudyReport(const std::string& path, const std::vector<ReportPoint>& points,
                              viz::StudyReportOptions options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_STUDIES_STUDY_REPORT_ROWS_H_
