// Fuzz target: a scenario in JSON, read as `clustersim run` and `clustersim
// serve` read FILE.json: parse, then Resolve (or ResolveServe for inference
// scenarios). docs/reliability.md says how to run it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/input/loader.h"
#include "tests/fuzz/resolve_scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<clustersim::config::Scenario> s =
      clustersim::scenarios::ParseScenarioJson(json, "fuzz.json");
  if (s.ok()) clustersim::fuzz::ResolveScenario(*s);
  return 0;
}
