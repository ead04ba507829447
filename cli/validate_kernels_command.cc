// `clustersim validate-kernels MEASUREMENTS [--calibration FILE]`: predicted vs
// measured time per kernel, and the median / p90 absolute percentage error on
// the held-out split against the target (median <= 5%, p90 <= 15%). Without
// --calibration the parameters are fitted on the training split first (as
// `calibrate` does); with it, the file's parameters are used as they are.
// Exit 1 with --require-target when the held-out split misses the target.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/measurement_input.h"
#include "cli/parse_args.h"
#include "models/calibration.h"
#include "models/calibration_fit.h"
#include "models/gpu_catalog.h"
#include "scenarios/input/loader.h"

namespace clustersim::cli {
namespace po = boost::program_options;

int ValidateKernelsCommand(const Args& args) {
  std::string input, calibration_path;
  bool help = false, require_target = false;
  po::options_description d(
      "usage: clustersim validate-kernels MEASUREMENTS [--calibration FILE]");
  d.add_options()("calibration", po::value(&calibration_path),
                  "use this calibration file instead of fitting the training split")(
      "require-target", po::bool_switch(&require_target),
      "exit 1 when the held-out split misses median <= 5%, p90 <= 15%")(
      "help,h", po::bool_switch(&help), "show this help");
  po::options_description hidden;
  hidden.add_options()("measurements", po::value(&input));
  po::positional_options_description pos;
  pos.add("measurements", 1);
  po::options_description all;
  all.add(d).add(hidden);
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "validate-kernels", &vm); !s.ok()) return Fail(s);
  if (help) {
    std::cout << d;
    return 0;
  }
  if (input.empty()) {
    return Fail(absl::InvalidArgumentError(
        "validate-kernels needs a measurement file, e.g. "
        "models/data/calibration/h100-sxm5-80gb.measurements.textproto"));
  }
  absl::StatusOr<MeasurementInput> in = LoadMeasurementInput(input);
  if (!in.ok()) return Fail(in.status());

  absl::StatusOr<models::FitResult> result;
  if (calibration_path.empty()) {
    result = models::FitCalibration(*in->gpu, in->points, {}, in->FixedParameters());
  } else {
    absl::StatusOr<std::string> cal_text = scenarios::ReadFile(calibration_path);
    if (!cal_text.ok()) return Fail(cal_text.status());
    absl::StatusOr<models::Calibration> cal = models::Calibration::Parse(*cal_text, calibration_path);
    if (!cal.ok()) return Fail(cal.status());
    if (cal->gpu() != in->gpu->name) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          calibration_path, " is for ", cal->gpu(), " but ", input, " was measured on ",
          in->gpu->name, "; pass the calibration of the same GPU")));
    }
    result = models::EvaluateCalibration(*in->gpu, in->points, cal->params());
  }
  if (!result.ok()) return Fail(absl::InvalidArgumentError(absl::StrCat(input, ": ", result.status().message())));
  std::cout << models::FormatValidation(in->gpu->name, in->file.provenance(), *result);
  if (require_target && !result->heldout.MeetsTarget()) {
    std::cerr << "clustersim: held-out kernel error misses the target\n";
    return 1;
  }
  return 0;
}

}  // namespace clustersim::cli
