// Fuzz target: a kernel calibration file and a measurement file (the same
// bytes read as each), as `clustersim validate-kernels` and `calibrate` read
// them. docs/reliability.md says how to run it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/calibration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)clustersim::models::Calibration::Parse(text, "fuzz.calibration.textproto");
  absl::StatusOr<clustersim::config::MeasurementFile> file =
      clustersim::models::ParseMeasurementFile(text, "fuzz.measurements.textproto");
  if (file.ok()) (void)clustersim::models::SelectMeasurements(*file);
  return 0;
}
