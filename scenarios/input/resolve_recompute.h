// File: scenarios/input/resolve_recompute.h
//
// The activation-recompute part of scenario resolution: the granularity
// (none, selective and its JAX / torchtitan variants, full), Megatron-Core's
// selective modules and full recompute's method and layer count, checked
// against each other and the model; and their echo into the resolved
// scenario.
//
// Example:
//   CLUSTERSIM_RETURN_IF_ERROR(ResolveRecompute(scenario.training(), model, &pc));
#ifndef CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_RECOMPUTE_H_
#define CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_RECOMPUTE_H_

#include "absl/status/status.h"
#include "models/transformer_config.h"
#include "scenarios/proto/scenario.pb.h"
#include "strategies/parallel_config.h"

namespace clustersim::scenarios {

// Sets pc's recompute fields from `t`; errors name the training field and a fix.
absl::Status ResolveRecompute(const config::TrainingConfig& t,
                              const models::TransformerConfig& model,
                              strategies::ParallelConfig* pc);

// The granularity as given (default "none"), full recompute's method and
// layer count when either was set, and the modules selective recompute
// replays (empty without it).
void EchoRecompute(const config::TrainingConfig& t, const strategies::ParallelConfig& pc,
                   config::TrainingConfig* et);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_RECOMPUTE_H_
