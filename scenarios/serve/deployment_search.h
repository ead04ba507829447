// File: scenarios/serve/deployment_search.h
//
// The deployment search (`clustersim serve --search`,
// inference.deployment_search): the cheapest deployment whose p99 TTFT and
// p99 TPOT meet the scenario's targets at its Poisson request rate, over the
// shapes of deployment_space.h and their replica (or instance) counts.
//
// A candidate is a shape with a count: aggregated, r replicas of tp x pp GPUs
// (r x tp x pp <= max_gpus); disaggregated, pi prefill instances of tp_p and
// di decode instances of tp_d GPUs. Each is judged as `clustersim serve`
// would run it, with the search's requests:
//   aggregated     scenarios/serve/serve_runner.h: one replica simulated at
//                  rate / r with requests_per_replica requests (the
//                  deployment's num_requests is r x that), p99 of its
//                  requests; saturated (rate / r at or above a replica's
//                  capacity) misses;
//   disaggregated  serve_disagg_model.h: both pools simulated at the rate with
//                  requests_per_replica x max(pi, di) requests.
// It meets the SLO when every set target holds at p99.
//
// Cost: $/hour = GPUs x $/GPU-hour (the catalog's default price of the GPU);
// $/M output tokens = $/hour / (rate x mean output tokens per request x
// 3600) x 1e6, the deployment's cost of serving the offered load (equal for
// every candidate that carries the rate, so it ranks by $/hour).
//
// Pruning, before simulating (each counted, the reason kept):
//   memory      a shape whose replica (or pool instance) does not fit one
//               GPU's memory (models/inference_memory.h): every count of it;
//   capacity    aggregated: r x (a replica's capacity, from the first
//               simulation of the shape) <= rate;
//   dominated   a count above the smallest one of the same shape that meets
//               the targets (more GPUs of the same price: costlier); for
//               disaggregated shapes also any count with at least the GPUs of
//               the cheapest aggregated deployment of the same GPU and formats
//               that meets the targets;
//   invalid     a shape the resolver refuses for another reason.
// Counts are tried in ascending GPUs, so the first that meets is the
// cheapest of its shape; a count that misses is kept (with its p99s).
//
// Ranking: meeting the targets first, by $/M tokens, then fewer GPUs, lower
// p99 TPOT, the name; then the simulated that miss, by how far they miss
// (the largest p99 / target); then those not simulated, by name. The Pareto
// front: the candidates meeting the targets that no other meeting candidate
// beats on both $/M tokens and p99 TPOT. Deterministic: the same scenario
// gives the same result.
//
// Errors: INVALID_ARGUMENT for a bad space (deployment_space.h) and when no
// shape fits the model in memory (naming the largest GPU count tried and a
// fix); CANCELLED.
//
// Example:
//   absl::StatusOr<config::DeploymentSearchResult> r = SearchDeployments(scenario, nullptr);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_DEPLOYMENT_SEARCH_H_
#define CLUSTERSIM_SCENARIOS_SERVE_DEPLOYMENT_SEARCH_H_

#include <atomic>

#include "absl/status/statusor.h"
#include "scenarios/proto/deployment_search.pb.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/serve/deployment_space.h"

namespace clustersim::scenarios {

// REQUIRES: scenario.inference().has_deployment_search().
absl::StatusOr<config::DeploymentSearchResult> SearchDeployments(const config::Scenario& scenario,
                                                                 const std::atomic<bool>* cancel);

// The scenario of one aggregated candidate: `replicas` replicas of `shape`,
// the targets explicit, requests_per_replica x replicas requests.
config::Scenario AggregatedScenario(const SearchSpace& space, const Shape& shape, int replicas);

// Sorts result->candidate by the ranking above and numbers them from 1.
void RankCandidates(config::DeploymentSearchResult* result);

// Sets `pareto` on the front of $/M tokens against p99 TPOT among the
// candidates that meet the targets (clears it elsewhere).
void MarkParetoFront(config::DeploymentSearchResult* result);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_DEPLOYMENT_SEARCH_H_
