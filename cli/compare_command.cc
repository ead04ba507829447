// `clustersim compare SCENARIO... [--set field=value]... [--variant "a=1,b=2"]...
// [--format text|csv|json] [--report FILE.html]`: simulate each case and print them side by side.
#include <iostream>
#include <sstream>

#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/parse_args.h"
#include "scenarios/studies/compare.h"
#include "scenarios/studies/study_report_rows.h"
#include "scenarios/studies/study_table.h"

namespace clustersim::cli {
namespace po = boost::program_options;

absl::Status CompareCommand(const Args& args, CommandIo& io) {
  scenarios::CompareRequest request;
  std::string format, report;
  bool help = false;
  po::options_description visible("Options");
  visible.add_options()(
      "set", po::value<std::vector<std::string>>(&request.sets)->composing(),
      "field=value applied to every case (repeatable), e.g. --set train_tokens=1e12")(
      "variant", po::value<std::vector<std::string>>(&request.variants)->composing(),
      "\"field=value,...\": one more case per scenario (repeatable), e.g. --variant \"tp=4,pp=2\"")(
      "format", po::value<std::string>(&format)->default_value("text"), "text|csv|json")(
      "report", po::value(&report), "FILE.html: a comparison table and a time-vs-cost scatter")(
      "help,h", po::bool_switch(&help), "show this help");
  po::options_description all;
  all.add(visible).add_options()(
      "scenario", po::value<std::vector<std::string>>(&request.scenario_paths), "scenario files");
  po::positional_options_description pos;
  pos.add("scenario", -1);
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "compare", &vm); !s.ok()) return s;
  if (help) {
    *io.out
        << "usage: clustersim compare SCENARIO... [--set field=value]... "
           "[--variant \"field=value,...\"]... [--format text|csv|json] [--report FILE.html]\n\n"
           "Fields are scenario.proto paths (parallelism.tensor_model_parallel_size) or\n"
           "aliases: tp pp vp cp ep dp zero dp_shard distopt sp schedule mbs gbs recompute precision\n"
           "fp8_recipe gpu num_gpus model tier price price_source train_tokens train_steps;\n"
           "recompute=block:N recomputes the first N layers of each model chunk in full.\n\n"
        << visible;
    return absl::OkStatus();
  }
  if (absl::Status s = CheckTableFormat(format); !s.ok()) return s;
  request.control = io.control;
  absl::StatusOr<std::vector<scenarios::StudyRow>> rows = scenarios::RunCompare(request);
  if (!rows.ok()) return rows.status();
  absl::StatusOr<std::string> table =
      scenarios::FormatStudyTable(*rows, format, /*side_by_side=*/true);
  if (!table.ok()) return table.status();
  *io.out << *table;
  if (!report.empty()) {
    std::vector<scenarios::ReportPoint> points;
    for (const scenarios::StudyRow& row : *rows) points.push_back(scenarios::ReportPointOf(row));
    const absl::Status s = scenarios::WriteStudyReport(
        report, points,
        {.title = "clustersim compare",
         .subtitle = absl::StrCat(request.scenario_paths.size(), " scenario(s), ", points.size(),
                                  " case(s)")});
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

int CompareCommand(const Args& args) { return RunOnStdIo(CompareCommand, args); }

}  // namespace clustersim::cli
