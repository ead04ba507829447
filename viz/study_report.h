// File: viz/study_report.h
//
// The report of a study: many candidate strategies run on one workload (the
// `search` and `sweep` commands). One self-contained HTML page (inline CSS and
// SVG, no script, no network) with
//   #study-table    a comparison table, one row per candidate, sorted by time
//                   to train (then cost, then label), the column shown sorted;
//                   Pareto-optimal rows are starred, rows that do not fit in
//                   memory are greyed
//   #study-scatter  time to train (x) against cost (y), one dot per candidate;
//                   the Pareto front (the candidates no other fitting candidate
//                   beats on both time and cost) drawn as a red staircase and
//                   labelled; candidates that do not fit are hollow
// Every piece of text is escaped; the same rows give the same bytes.
//
// Example:
//   std::vector<StudyRow> rows = {{.label = "tp8 pp4", .step_time_s = 2.1, ...}, ...};
//   std::string html = RenderStudyReport(rows, {.title = "GPT-3 175B on 1024 H100"});
#ifndef CLUSTERSIM_VIZ_STUDY_REPORT_H_
#define CLUSTERSIM_VIZ_STUDY_REPORT_H_

#include <string>
#include <vector>

namespace clustersim::viz {

struct StudyRow {
  std::string label;          // the strategy, e.g. "tp8 pp4 dp32 mbs1 1f1b"
  double step_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;             // fraction of peak
  double memory_gib = 0;      // peak per GPU
  bool fits = true;           // in the GPU's memory
  double usd_per_gpu_hour = 0;
  double dollars = 0;         // cost to train
  double time_to_train_s = 0;
};

struct StudyReportOptions {
  std::string title = "clustersim study";
  std::string subtitle;             // e.g. the model, cluster and token budget
  double memory_capacity_gib = -1;  // shown in the table header when >= 0
  // No run length was given: each row's time_to_train_s holds its step time
  // and dollars its dollars per million tokens; the headers, axes and summary
  // say so (and the separate step-time column is left out).
  bool step_axes = false;
};

// For each row, whether it is on the Pareto front of (time_to_train_s,
// dollars), both minimised: it fits, both values are finite, and no other
// fitting row has time and cost no larger with at least one smaller. Rows
// with equal time and cost are on the front together. O(n log n).
std::vector<bool> ParetoFront(const std::vector<StudyRow>& rows);

// The row indices in display order: time to train, then cost, then label.
std::vector<size_t> StudyOrder(const std::vector<StudyRow>& rows);

// The table and the scatter alone (the page embeds both).
std::string StudyTableHtml(const std::vector<StudyRow>& rows, const StudyReportOptions& options);
std::string StudyScatterSvg(const std::vector<StudyRow>& rows,
                            const StudyReportOptions& options = {});

// The whole page.
std::string RenderStudyReport(const std::vector<StudyRow>& rows,
                              const StudyReportOptions& options);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_STUDY_REPORT_H_
