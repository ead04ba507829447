// File: scenarios/serve/serve_disagg_runner.h
//
// Runs `clustersim serve` for a disaggregated deployment (serve_disagg_resolve.h):
// builds its models (serve_disagg_model.h: cluster, per-pool kernel and
// iteration cost models, KV transfer cost), simulates the whole deployment
// (strategies/serving_disaggregated.h: every instance, every request) at the
// offered load and all at once (the capacity), finds the goodput, runs the
// ratio search when asked (serve_disagg_search.h) and assembles the
// ServeResult with its `disaggregated` part.
//
// Figures: TTFT, TPOT, E2E as the colocated runner (serve_runner.h); pool
// busy fraction = the pool's summed iteration time / (instances x span);
// MFU per pool over its GPUs; goodput and goodput per GPU by DistServe's
// definition (serve_goodput.h) under inference.target_time_to_first_token_ms /
// target_time_per_output_token_ms and disaggregated.slo_attainment; $/hour =
// every pool GPU x its price; $/million output tokens at the offered load
// and at the goodput rate; power at TDP x pricing utilisation x PUE.
//
// Example:
//   absl::StatusOr<config::ServeResult> r = RunDisaggServe(resolved, scenario, {});
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_RUNNER_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_RUNNER_H_

#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/proto/serve_result.pb.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "sim/run_control.h"

namespace clustersim::scenarios {

struct DisaggServeOptions {
  // Another thread's stop flag and progress (simulations done / planned);
  // CANCELLED once set. Null: none.
  sim::RunControl* control = nullptr;
};

// `scenario` is the one `d` was resolved from (the search reshapes it).
absl::StatusOr<config::ServeResult> RunDisaggServe(const ResolvedDisagg& d,
                                                   const config::Scenario& scenario,
                                                   const DisaggServeOptions& options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_RUNNER_H_
