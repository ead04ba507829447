#include "cli/measurement_input.h"

#include "absl/strings/str_cat.h"
#include "scenarios/input/loader.h"

namespace clustersim::cli {

absl::StatusOr<MeasurementInput> LoadMeasurementInput(const std::string& path) {
  absl::StatusOr<std::string> text = scenarios::ReadFile(path);
  if (!text.ok()) return text.status();
  MeasurementInput in;
  absl::StatusOr<config::MeasurementFile> file = models::ParseMeasurementFile(*text, path);
  if (!file.ok()) return file.status();
  in.file = *std::move(file);
  absl::StatusOr<const models::GpuSpec*> gpu =
      models::GpuCatalog::Default().Find(in.file.gpu().name());
  if (!gpu.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": gpu.name: ", gpu.status().message()));
  }
  in.gpu = *gpu;
  absl::StatusOr<std::vector<models::Measurement>> points = models::SelectMeasurements(in.file);
  if (!points.ok()) return points.status();
  in.points = *std::move(points);
  return in;
}

}  // namespace clustersim::cli
