// File: scenarios/serve/serve_disagg_runner.h
//
// Runs `clustersim serve` for a disaggregated deployment (serve_disagg_resolve.h):
// builds the cluster that holds both pools, one kernel model per pool GPU,
// one iteration cost model per pool (strategies/serving_iteration.h, over the
// GPUs of the pool's first instance), and the KV transfer cost; simulates
// the whole deployment (strategies/serving_disaggregated.h: every instance,
// every request) and assembles the ServeResult with its `disaggregated`
// part.
//
// KV transfer cost: a request of n prompt tokens moves n x KV bytes per token
// of the whole model (models/inference_memory.h KvBytesPerToken at tp 1, pp 1:
// layers x 2 x kv_heads x head_dim x dtype bytes; OPT-13B in fp16: 800 KiB per
// token). Each GPU of the prefill instance holds its shard; the n_p prefill
// and n_d decode GPUs pair up as S = max(n_p, n_d) streams (stream k from
// prefill GPU k mod n_p to decode GPU k mod n_d, bytes / S each), costed as
// send/recv by the network model over the real route (NVLink inside a node,
// PCIe and the NICs across nodes); streams sharing a GPU run one after
// another: time = ceil(S / min(n_p, n_d)) x the slowest stream. Memoised by
// (prefill instance, decode instance, n).
//
// Figures: TTFT, TPOT, E2E as the colocated runner (serve_runner.h); pool
// busy fraction = the pool's summed iteration time / (instances x span);
// MFU per pool over its GPUs; capacity = all requests at once; goodput and
// goodput per GPU by DistServe's definition (serve_goodput.h) under
// inference.target_time_to_first_token_ms / target_time_per_output_token_ms
// and disaggregated.slo_attainment; $/hour = every pool GPU x its price;
// $/million output tokens at the offered load and at the goodput rate.
//
// The ratio search (disaggregated.search.enabled): every (prefill instances,
// prefill tp, decode instances, decode tp) with pp 1, tp in {1, 2, 4, 8}
// dividing the heads and fitting a node, that uses exactly total_gpus, plus
// the colocated deployments of every tp (decode_instances 0), each with its
// goodput per GPU (10 bisection steps), best first (ties: fewer prefill GPUs).
// With search.request_rate_per_s, each candidate's attainment at that rate too,
// and the ranking puts those meeting it first.
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
