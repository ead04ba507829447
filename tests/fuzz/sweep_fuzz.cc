// Fuzz target: a sweep file, expanded as `clustersim sweep FILE` expands it
// (base_scenario resolves against scenarios/examples/sweeps/, as for the shipped
// sweeps), then the first points resolved. docs/reliability.md says how to run it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/input/resolve.h"
#include "scenarios/studies/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<clustersim::scenarios::SweepPoint>> points =
      clustersim::scenarios::ParseSweep(text, "fuzz.sweep.textproto", CLUSTERSIM_FUZZ_SWEEP_DIR);
  if (!points.ok()) return 0;
  for (size_t i = 0; i < std::min<size_t>(points->size(), 8); ++i) {
    (void)clustersim::scenarios::Resolve((*points)[i].scenario);
  }
  return 0;
}
