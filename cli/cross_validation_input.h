// File: cli/cross_validation_input.h
//
// The leave-one-source-out run behind `validate --leave-one-source-out` and
// `fit`: checks --threads, --stride and --offset, reads the training tables,
// draws progress on stderr when it is a terminal, and cross-validates
// (scenarios/accuracy/cross_validation.h). Errors name the flag or the file.
//
// Example:
//   absl::StatusOr<scenarios::CrossValidation> cv = CrossValidateFiles(files, options);
#ifndef CLUSTERSIM_CLI_CROSS_VALIDATION_INPUT_H_
#define CLUSTERSIM_CLI_CROSS_VALIDATION_INPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/accuracy/cross_validation.h"

namespace clustersim::cli {

absl::StatusOr<scenarios::CrossValidation> CrossValidateFiles(
    const std::vector<std::string>& files, scenarios::CrossValidationOptions options);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_CROSS_VALIDATION_INPUT_H_
