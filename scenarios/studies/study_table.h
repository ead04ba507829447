// File: scenarios/studies/study_table.h
//
// The table of results that `clustersim compare` and `clustersim search`
// print: one row per labelled result, one column per metric (strategy, step
// time, tokens/s, MFU, bubble, exposed communication, peak memory, fits,
// $/GPU-hour, $/million tokens, time-to-train, GPU-hours, total dollars).
// Formats: "text" (aligned; side by side puts one column per result),
// "csv" (RFC 4180, one row per result) and "json" (an array of objects, raw
// numbers). Deterministic: same rows, same bytes.
//
// Example:
//   std::vector<StudyRow> rows = {{"baseline", result_a}, {"tp=4", result_b}};
//   absl::StatusOr<std::string> t = FormatStudyTable(rows, "text", /*side_by_side=*/true);
#ifndef CLUSTERSIM_SCENARIOS_STUDIES_STUDY_TABLE_H_
#define CLUSTERSIM_SCENARIOS_STUDIES_STUDY_TABLE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/proto/result.pb.h"

namespace clustersim::scenarios {

struct StudyRow {
  std::string label;
  config::Result result;
  // The strategy names its training precision whatever it is (a search over
  // several precisions); otherwise only fp8 is named.
  bool show_precision = false;
};

// "tp8 pp4 vp2 dp32 mbs1 gbs512 rc-selective distopt sp interleaved-1f1b" (vp, cp,
// ep only when > 1; the schedule only with pp > 1), then the training
// precision ("fp8") when it is fp8 or `show_precision`. Block recompute of
// the first N layers of each model chunk reads "rc-blockN"; activation offload
// of N layers adds " offloadN" after it.
std::string StrategyLabel(const config::Scenario& resolved, bool show_precision = false);

// One result as a JSON object on one line (no newline), and as a CSV row
// (with newline) under StudyCsvHeader(): for files appended point by point.
// With block recompute the JSON object also carries "recompute_method":
// "block" and "recompute_num_layers": N after the strategy (the CSV's
// strategy column names both as "rc-blockN").
// With `goodput` (a sweep whose points carry a `reliability` section, or a
// compare or search table with a row that carries goodput) the CSV
// ends in six more columns from result.goodput: goodput_percent (effective
// training time), goodput_p10/p50/p90_days (time to train), interruptions
// (expected) and goodput_total_usd (dollars, waste included); empty in a row
// without goodput.
std::string StudyJsonObject(const StudyRow& row);
std::string StudyCsvHeader(bool goodput = false);
std::string StudyCsvRow(const StudyRow& row, bool goodput = false);

// Read back from one StudyJsonObject line: its label ("" when the line does
// not start with one) and the number after "key": (nullopt when absent or not
// a number, e.g. on an {"label": ..., "error": ...} line).
std::string StudyJsonLabel(const std::string& line);
std::optional<double> StudyJsonNumber(const std::string& line, std::string_view key);

// InvalidArgument for a format other than text, csv or json.
absl::StatusOr<std::string> FormatStudyTable(const std::vector<StudyRow>& rows,
                                             std::string_view format, bool side_by_side);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_STUDIES_STUDY_TABLE_H_
