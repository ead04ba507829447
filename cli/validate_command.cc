// `clustersim validate FILE.csv...`: simulate every row of published
// measurement tables and print measured vs predicted, MAPE per source and
// overall. Exit 1 when --max-mape is given and exceeded.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/parse_args.h"
#include "scenarios/csv_table.h"
#include "scenarios/loader.h"
#include "scenarios/validation.h"

namespace clustersim::cli {
namespace po = boost::program_options;

int ValidateCommand(const Args& args) {
  std::vector<std::string> files;
  double target = 10, max_mape = -1;
  int stride = 1, offset = 0;
  double host_overhead = -1;
  bool help = false;
  po::options_description d("usage: clustersim validate FILE.csv... [flags]");
  d.add_options()("target", po::value(&target)->default_value(10),
                  "MAPE target to report against (percent)")(
      "max-mape", po::value(&max_mape), "exit 1 when any table's overall MAPE exceeds this")(
      "stride", po::value(&stride)->default_value(1), "run every n-th row of each table")(
      "offset", po::value(&offset)->default_value(0), "first row to run (0-based)")(
      "host-overhead-us", po::value(&host_overhead),
      "override every row's host launch time per op (microseconds)")(
      "help,h", po::bool_switch(&help), "show this help");
  po::options_description hidden;
  hidden.add_options()("file", po::value(&files));
  po::positional_options_description pos;
  pos.add("file", -1);
  po::options_description all;
  all.add(d).add(hidden);
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "validate", &vm); !s.ok()) return Fail(s);
  if (help) {
    std::cout << d;
    return 0;
  }
  if (files.empty()) {
    return Fail(absl::InvalidArgumentError(
        "validate needs at least one table, e.g. tests/validation/published-runs.csv"));
  }
  if (stride < 1 || offset < 0) {
    return Fail(absl::InvalidArgumentError("--stride must be at least 1 and --offset at least 0"));
  }
  bool exceeded = false;
  for (const std::string& f : files) {
    absl::StatusOr<std::string> text = scenarios::ReadFile(f);
    if (!text.ok()) return Fail(text.status());
    absl::StatusOr<scenarios::CsvTable> table = scenarios::ParseCsv(*text, f);
    if (!table.ok()) return Fail(table.status());
    absl::StatusOr<scenarios::ValidationReport> report =
        scenarios::ValidateTable(*table, f,
                                 {.stride = stride, .offset = offset,
                                  .host_overhead_us = host_overhead});
    if (!report.ok()) return Fail(report.status());
    std::cout << scenarios::FormatValidationReport(*report, target) << "\n";
    if (max_mape >= 0 && report->overall_mape > max_mape) exceeded = true;
  }
  if (exceeded) {
    std::cerr << "clustersim: validation MAPE above --max-mape " << max_mape << "%\n";
    return 1;
  }
  return 0;
}

}  // namespace clustersim::cli
