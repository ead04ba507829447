// File: strategies/expert_parallel.h
//
// Rules for mixture-of-experts models and expert parallelism (ep), as
// Megatron-core checks them: ep splits the routed experts of every MoE layer
// over ep ranks carved out of the data-parallel (x context-parallel) ranks of
// a pipeline stage (strategies/placement.h), so ep must divide both
// model.num_experts and dp·cp; the experts stay tensor-parallel like the
// dense MLP (expert TP = tp), which Megatron-core trains only under sequence
// parallelism (MoELayer.forward: "During training, performance may degrade if
// MoE and tensor parallelism are enabled without also enabling sequence
// parallelism" is raised as an error), whatever ep.
//
// MoE parallel folding (Megatron-Core --expert-tensor-parallel-size 1, the
// Megatron-Bridge MoE recipes' setting): the experts are not tensor-split;
// every rank routes its own sequence-parallel shard, and the expert-parallel
// group is ep consecutive ranks of the stage's tp x dp x cp (placement.h), so
// ep must divide tp·dp·cp instead of dp·cp. Expert TP other than 1 or tp is
// refused.
//
// Example:
//   if (absl::Status s = ValidateExpertParallel(model, config); !s.ok()) return s;
#ifndef CLUSTERSIM_STRATEGIES_EXPERT_PARALLEL_H_
#define CLUSTERSIM_STRATEGIES_EXPERT_PARALLEL_H_

#include "absl/status/status.h"
#include "models/transformer_config.h"
#include "strategies/parallel_config.h"

namespace clustersim::strategies {

// REQUIRES: `p.data_parallel` derived. InvalidArgument naming the field and a
// fix. (ZeRO-3 / FSDP shards the experts over the expert-data-parallel group:
// strategies/step_builder.h.)
absl::Status ValidateExpertParallel(const models::TransformerConfig& model,
                                    const ParallelConfig& p);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_EXPERT_PARALLEL_H_
