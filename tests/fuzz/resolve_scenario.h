// File: tests/fuzz/resolve_scenario.h
//
// What the CLI does with a parsed scenario short of simulating it, for the
// fuzz targets: ResolveServe for inference scenarios (`clustersim serve`),
// Resolve otherwise (`clustersim run`). Errors are expected and ignored; a
// crash, hang or sanitizer report is the finding.
#ifndef CLUSTERSIM_TESTS_FUZZ_RESOLVE_SCENARIO_H_
#define CLUSTERSIM_TESTS_FUZZ_RESOLVE_SCENARIO_H_

#include "scenarios/input/resolve.h"
#include "scenarios/serve/serve_resolve.h"

namespace clustersim::fuzz {

inline void ResolveScenario(const config::Scenario& s) {
  if (s.has_inference()) {
    (void)scenarios::ResolveServe(s);
  } else {
    (void)scenarios::Resolve(s);
  }
}

}  // namespace clustersim::fuzz

#endif  // CLUSTERSIM_TESTS_FUZZ_RESOLVE_SCENARIO_H_
