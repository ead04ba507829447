// File: cli/measurement_input.h
//
// Reads a kernel measurement file for `calibrate` and `validate-kernels`: the
// file, the catalog GPU it names, and one measurement per shape. Errors name
// the file (and gpu.name when the GPU is unknown).
//
// Example:
//   absl::StatusOr<MeasurementInput> in = LoadMeasurementInput(path);
#ifndef CLUSTERSIM_CLI_MEASUREMENT_INPUT_H_
#define CLUSTERSIM_CLI_MEASUREMENT_INPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "models/proto/calibration.pb.h"

namespace clustersim::cli {

struct MeasurementInput {
  config::MeasurementFile file;
  const models::GpuSpec* gpu = nullptr;  // points into the GPU catalog
  std::vector<models::Measurement> points;
  // The file's fixed_parameters, for FitCalibration.
  std::vector<std::string> FixedParameters() const {
    return {file.fixed_parameters().begin(), file.fixed_parameters().end()};
  }
};

absl::StatusOr<MeasurementInput> LoadMeasurementInput(const std::string& path);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_MEASUREMENT_INPUT_H_
