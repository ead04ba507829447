// Fuzz target: a validation table (published-runs.csv or vTrain's CSVs), read
// as `clustersim validate FILE.csv` reads it; every row is resolved, none
// simulated (ValidationOptions::resolve_only). docs/reliability.md says how.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/accuracy/validation.h"
#include "sim/csv_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<clustersim::sim::CsvTable> t =
      clustersim::sim::ParseCsv(text, "fuzz.csv");
  if (!t.ok()) return 0;
  clustersim::scenarios::ValidationOptions options;
  options.resolve_only = true;
  absl::StatusOr<clustersim::scenarios::ValidationReport> r =
      clustersim::scenarios::ValidateTable(*t, "fuzz.csv", options);
  if (r.ok()) (void)clustersim::scenarios::FormatValidationReport(*r, 10);
  return 0;
}
