// File: scenarios/serve/serve_speculative.h
//
// `inference.speculative` for `clustersim serve` (scenarios/proto/inference.proto,
// model in strategies/serving_speculative.h): resolves and checks the section,
// and reports what speculation bought.
//
// Resolution: method "draft" | "mtp" | "eagle" (default "draft" when a
// draft_model is given, else "eagle"); num_speculative_tokens k in [1, 16]
// (default 4, inside the 2-7 that vLLM's EAGLE benchmarks sweep, vllm issue
// 20780); acceptance_rate alpha in [0, 1] (required: it depends on the drafter
// and the data; an EAGLE-1 head on Llama 3.1 8B emits 2.1-2.5 tokens per step
// at k 2-7 on MT-bench in vLLM, ibid., i.e. alpha about 0.6; a 68M draft model
// for Vicuna-7B 2.29, Spec-Bench's leaderboard); seed defaults to the
// workload's. A draft model is a preset or an inline architecture that must
// share the target's vocabulary and split over the same tensor parallelism.
// The drafter's weights and KV per token go into the memory inputs and its
// acceptance draws into the scheduler. Errors are INVALID_ARGUMENT naming the
// inference.speculative field and a fix.
//
// Report: the simulated mean tokens per decode step next to the formula's
// (1 - alpha^(k+1)) / (1 - alpha), the drafter's memory, and a re-simulation
// of the same requests without speculation (the drafter's memory back in the
// KV cache, no curve, no targets) for p50 TPOT, p50 end-to-end and capacity
// speed-ups.
//
// Example:
//   CLUSTERSIM_RETURN_IF_ERROR(ResolveSpeculative(scenario, &resolved));  // in ResolveServe
//   CLUSTERSIM_RETURN_IF_ERROR(ReportSpeculative(resolved, run, &result));   // in RunServe
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_SPECULATIVE_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_SPECULATIVE_H_

#include "absl/status/status.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/proto/serve_result.pb.h"
#include "scenarios/serve/serve_resolve.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::scenarios {

// Fills r->speculative, the drafter's memory, the scheduler's speculation
// fields and the echo from in.inference().speculative(); nothing when the
// section is absent. REQUIRES: the rest of `r` resolved (model, tp, workload).
absl::Status ResolveSpeculative(const config::Scenario& in, ResolvedServe* r);

// Sets result->speculative() from the run with speculation and a
// re-simulation without it. REQUIRES: s.speculative; `result` filled by RunServe.
absl::Status ReportSpeculative(const ResolvedServe& s, const strategies::ServingRun& run,
                               config::ServeResult* result);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_SPECULATIVE_H_
