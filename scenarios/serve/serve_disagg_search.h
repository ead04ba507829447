// File: scenarios/serve/serve_disagg_search.h
//
// The ratio search of a disaggregated deployment (disaggregated.search,
// `clustersim serve --disagg-search`): every (prefill instances, prefill tp,
// decode instances, decode tp) with pp 1, tp in {1, 2, 4, 8} dividing the
// heads and the ffn size and fitting a node, that uses exactly total_gpus,
// plus the colocated deployments of every tp dividing total_gpus
// (decode_instances 0), each with its goodput and goodput per GPU by
// DistServe's definition (serve_goodput.h, 10 bisection steps). Ranked best
// first (ties: fewer prefill GPUs). With search.request_rate_per_s, each
// disaggregated candidate's SLO attainment at that rate too, and those that
// attain come first. A candidate that cannot run (memory, shapes) stays in the
// list with goodput 0 and the reason as its status.
//
// Example:
//   CLUSTERSIM_RETURN_IF_ERROR(SearchDisaggRatios(resolved, scenario, nullptr, &result));
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_SEARCH_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_SEARCH_H_

#include <atomic>

#include "absl/status/status.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/proto/serve_result.pb.h"
#include "scenarios/serve/serve_disagg_resolve.h"

namespace clustersim::scenarios {

// `scenario` is the one `d` was resolved from; fills out->search and
// out->search_detail. Errors: CANCELLED, or a simulation failing.
absl::Status SearchDisaggRatios(const ResolvedDisagg& d, const config::Scenario& scenario,
                                const std::atomic<bool>* cancel, config::DisaggServeResult* out);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_SEARCH_H_
