#include "scenarios/studies/study_report_rows.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "sim/atomic_file.h"

namespace clustersim::scenarios {

ReportPoint ReportPointOf(const StudyRow& row) {
  const config::Result& r = row.result;
  ReportPoint p;
  p.row = {.label = row.label,
           .step_time_s = r.step_time_s(),
           .tokens_per_s = r.tokens_per_s(),
           .mfu = r.mfu(),
           .memory_gib = r.peak_memory_gib(),
           .fits = r.fits_in_memory(),
           .usd_per_gpu_hour = r.cost().usd_per_gpu_hour(),
           .dollars = r.train().total_usd(),
           .time_to_train_s = r.train().time_to_train_s()};
  p.usd_per_million_tokens = r.cost().usd_per_million_tokens();
  p.has_train = r.has_train();
  p.memory_capacity_gib = r.memory_capacity_gib();
  return p;
}

std::optional<ReportPoint> ReportPointOfJson(const std::string& line) {
  const std::optional<double> step = StudyJsonNumber(line, "step_time_s");
  if (!step) return std::nullopt;
  const auto number = [&](std::string_view key) { return StudyJsonNumber(line, key).value_or(0); };
  ReportPoint p;
  p.row = {.label = StudyJsonLabel(line),
           .step_time_s = *step,
           .tokens_per_s = number("tokens_per_s"),
           .mfu = number("mfu"),
           .memory_gib = number("peak_memory_gib"),
           .fits = line.find("\"fits_in_memory\": true") != std::string::npos,
           .usd_per_gpu_hour = number("usd_per_gpu_hour"),
           .dollars = number("total_usd"),
           .time_to_train_s = number("time_to_train_days") * 86400};
  p.usd_per_million_tokens = number("usd_per_million_tokens");
  p.has_train = StudyJsonNumber(line, "total_usd").has_value();
  return p;
}

absl::Status WriteStudyReport(const std::string& path, const std::vector<ReportPoint>& points,
                              viz::StudyReportOptions options) {
  options.step_axes = points.empty() || std::any_of(points.begin(), points.end(),
                                                    [](const ReportPoint& p) { return !p.has_train; });
  std::vector<viz::StudyRow> rows;
  for (const ReportPoint& p : points) {
    viz::StudyRow row = p.row;
    if (options.step_axes) {  // viz::StudyReportOptions::step_axes: the axes' values
      row.time_to_train_s = row.step_time_s;
      row.dollars = p.usd_per_million_tokens;
    }
    rows.push_back(std::move(row));
  }
  // The capacity goes in the header only when every candidate has the same GPU.
  if (options.memory_capacity_gib < 0 && !points.empty() &&
      std::all_of(points.begin(), points.end(), [&](const ReportPoint& p) {
        return p.memory_capacity_gib == points[0].memory_capacity_gib;
      })) {
    options.memory_capacity_gib = points[0].memory_capacity_gib;
  }
  absl::Status s = sim::WriteFileAtomically(path, viz::RenderStudyReport(rows, options));
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--report: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios
