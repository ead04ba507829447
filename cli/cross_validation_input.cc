#include "cli/cross_validation_input.h"

#include <unistd.h>

#include <iostream>

#include "absl/strings/str_cat.h"

namespace clustersim::cli {

absl::StatusOr<scenarios::CrossValidation> CrossValidateFiles(
    const std::vector<std::string>& files, scenarios::CrossValidationOptions options) {
  if (options.threads < 1 || options.threads > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads=", options.threads, " must be between 1 and 256"));
  }
  if (options.stride < 1 || options.offset < 0) {
    return absl::InvalidArgumentError("--stride must be at least 1 and --offset at least 0");
  }
  if (isatty(STDERR_FILENO)) {
    options.progress = [](int done, int total) {
      std::cerr << "\rsimulated " << done << " of " << total << " table passes" << std::flush;
      if (done == total) std::cerr << "\n";
    };
  }
  absl::StatusOr<std::vector<scenarios::NamedTable>> tables = scenarios::LoadTrainingTables(files);
  if (!tables.ok()) return tables.status();
  return scenarios::LeaveOneSourceOut(*tables, options);
}

}  // namespace clustersim::cli
