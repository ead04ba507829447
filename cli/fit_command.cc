// `clustersim fit FILE.csv...`: refit every software-stack profile's GEMM
// factor on all the training tables given (each stack on the rows that ran it,
// every source weighted alike) and print the grid, the objective and the
// shipped value beside the fit (scenarios/accuracy/cross_validation.h). The
// shipped values live in models/data/frameworks.textproto.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/cross_validation_input.h"
#include "cli/parse_args.h"
#include "models/prediction_interval.h"
#include "scenarios/accuracy/cross_validation.h"
#include "sim/atomic_file.h"

namespace clustersim::cli {
namespace po = boost::program_options;

int FitCommand(const Args& args) {
  std::vector<std::string> files;
  int threads = 1, stride = 1, offset = 0;
  std::string grid, intervals_path;
  bool help = false;
  po::options_description d("usage: clustersim fit FILE.csv... [flags]");
  d.add_options()("threads", po::value(&threads)->default_value(1), "tables simulated in parallel")(
      "grid", po::value(&grid), "GEMM factors to try, comma-separated, each in (0, 1]")(
      "stride", po::value(&stride)->default_value(1), "use every n-th row of each table")(
      "offset", po::value(&offset)->default_value(0), "first row used (0-based)")(
      "write-intervals", po::value(&intervals_path),
      "write the 80% prediction bands of the out-of-source residuals to this file "
      "(models/data/prediction_intervals.textproto ships them)")("help,h", po::bool_switch(&help),
                                                                 "show this help");
  po::options_description hidden;
  hidden.add_options()("file", po::value(&files));
  po::positional_options_description pos;
  pos.add("file", -1);
  po::options_description all;
  all.add(d).add(hidden);
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "fit", &vm); !s.ok()) return Fail(s);
  if (help) {
    std::cout << d;
    return 0;
  }
  if (files.empty()) {
    return Fail(absl::InvalidArgumentError(
        "fit needs at least one training table, e.g. tests/validation/published-runs.csv"));
  }
  scenarios::CrossValidationOptions options;
  options.threads = threads;
  options.stride = stride;
  options.offset = offset;
  if (!grid.empty()) {
    options.gemm_grid.clear();
    for (absl::string_view v : absl::StrSplit(grid, ',')) {
      double x = 0;
      if (!absl::SimpleAtod(v, &x) || !(x > 0 && x <= 1)) {
        return Fail(absl::InvalidArgumentError(
            absl::StrCat("--grid value '", std::string(v),
                         "' is not a GEMM factor in (0, 1], e.g. --grid 0.8,0.9,1")));
      }
      options.gemm_grid.push_back(x);
    }
  }
  absl::StatusOr<scenarios::CrossValidation> cv = CrossValidateFiles(files, options);
  if (!cv.ok()) return Fail(cv.status());
  std::cout << scenarios::FormatStackFits(*cv);
  if (!intervals_path.empty()) {
    std::string command = "clustersim fit";
    for (const std::string& a : args) absl::StrAppend(&command, " ", a);
    const std::string text = models::PredictionIntervals::Format(
        cv->bands,
        absl::StrCat(command, "; out-of-source residuals of ", cv->rows,
                     " rows; 10-90% quantiles widened ", cv->band_width_scale,
                     "x about their centre (log scale)"),
        cv->band_coverage);
    if (absl::Status s = sim::WriteFileAtomically(intervals_path, text); !s.ok()) return Fail(s);
    std::cout << "wrote " << cv->bands.size() << " bands to " << intervals_path
              << "; the band built without each source holds " << 100 * cv->band_coverage
              << "% of its rows, " << 100 * cv->band_coverage_source_mean
              << "% averaged over sources\n";
  }
  return 0;
}

}  // namespace clustersim::cli
