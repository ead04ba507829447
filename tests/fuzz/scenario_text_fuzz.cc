// Fuzz target: a scenario in protobuf text format, read as `clustersim run`
// and `clustersim serve` read FILE.textproto: parse, then Resolve (or
// ResolveServe for inference scenarios), every check short of simulating.
// docs/reliability.md says how to run it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/input/loader.h"
#include "tests/fuzz/resolve_scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<clustersim::config::Scenario> s =
      clustersim::scenarios::ParseScenarioText(text, "fuzz.textproto");
  if (s.ok()) clustersim::fuzz::ResolveScenario(*s);
  return 0;
}
