// File: scenarios/input/resolve_testing.h
//
// Helpers for the scenarios/input resolve tests: a scenario from text and the
// simulated step time of a scenario, each failing the calling test (not
// crashing it) when parsing, resolving or running fails.
#ifndef CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_TESTING_H_
#define CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_TESTING_H_

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios::resolve_testing {

inline config::Scenario Parse(const char* text) {
  absl::StatusOr<config::Scenario> s = ParseScenarioText(text, "test");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

// Resolves and runs `s`; the simulated step time in seconds.
inline double StepSeconds(const config::Scenario& s) {
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  EXPECT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> res = RunScenario(*r, {});
  EXPECT_TRUE(res.ok()) << res.status();
  return res->step_time_s();
}

}  // namespace clustersim::scenarios::resolve_testing

#endif  // CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_TESTING_H_
