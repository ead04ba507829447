// File: strategies/search_space.h
//
// The parallel strategies `clustersim search` considers for one model on N
// GPUs, and the cheap checks that reject most of them before any simulation:
// ValidateParallelConfig (divisibility, ranges; features not simulated yet are
// "unsupported") and the memory model (models/memory_model.h, first pipeline
// stage, the most loaded).
//
// Enumerated, in this nesting order (the order results tie-break in):
//   tp in powers of two up to the GPUs per node; pp in powers of two up to the
//   layers; vp in {1, 2, 4} (pp > 1; interleaved schedule); cp in {1, 2}; ep in
//   {1, 2, 4, 8} for MoE models, else 1; micro-batch in {1, 2, 4, 8};
//   recompute none/selective/full; optimizer plain / distributed (ZeRO-1) /
//   ZeRO-3 over every data-parallel rank / ZeRO-3 sharded inside one node and
//   replicated across nodes (hybrid sharding; dense models, where a node holds
//   more than one and fewer than all data-parallel ranks); schedule 1f1b or
//   zb-h1 (pp > 1, vp = 1). Sequence parallelism is on
//   whenever tp > 1, gradient reduction overlaps the backward pass; dp is
//   derived.
// Block recompute is not a dimension of its own: a strategy without recompute
// that does not fit gets one variant, full recompute of the fewest layers per
// model chunk that fits (BlockRecomputeVariant), right after it.
//
// Example:
//   SearchSpace space{.num_gpus = 1024, .global_batch_size = 1024, .gpus_per_node = 8};
//   std::vector<ParallelConfig> all = EnumerateStrategies(model, space);
//   absl::StatusOr<...> verdict = PruneStrategy(model, gpu_memory, finetune, 1024, &all[0]);
#ifndef CLUSTERSIM_STRATEGIES_SEARCH_SPACE_H_
#define CLUSTERSIM_STRATEGIES_SEARCH_SPACE_H_

#include <optional>
#include <string>
#include <vector>

#include "models/finetune.h"
#include "models/memory_model.h"
#include "models/memory_verdict.h"
#include "models/transformer_config.h"
#include "sim/units.h"
#include "strategies/parallel_config.h"

namespace clustersim::strategies {

struct SearchSpace {
  int num_gpus = 8;
  int global_batch_size = 1;
  int gpus_per_node = 8;  // tp stays inside a node
  models::Dtype precision = models::Dtype::kBf16;
};

// Every combination above, unvalidated (data_parallel is not yet derived).
std::vector<ParallelConfig> EnumerateStrategies(const models::TransformerConfig& model,
                                                const SearchSpace& space);

// Why a strategy is not simulated: `reason` groups rejections for counting
// ("invalid: parallelism.tensor_model_parallel_size", "unsupported:
// parallelism.context_parallel_size", "memory: activations"); `detail` is
// the full message. Empty reason: feasible (config->data_parallel derived).
// `keep_non_layer_gathered`: the stack's ZeRO-3 holds the embedding and output
// layer gathered (models::MemoryInputs; the profile's megatron_fsdp).
struct Pruning {
  std::string reason;
  std::string detail;
  models::MemoryVerdict memory;  // set when rejected by memory
};
Pruning PruneStrategy(const models::TransformerConfig& model, sim::Bytes gpu_memory,
                      const models::FinetuneSpec& finetune, int num_gpus, ParallelConfig* config,
                      bool keep_non_layer_gathered = false);

// For a strategy that PruneStrategy rejected by memory: the same strategy with
// Megatron-Core's block recompute of the first N layers of each model chunk,
// N the smallest that fits (models::SmallestBlockRecompute), validated with
// data_parallel derived. nullopt when there is none: the schedule cannot run
// block recompute (zb-h1), full recompute does not fit either, or only every
// layer fits (the full-recompute strategy is that). Reuses the N that the
// pruning's memory remedies found, when they tried block recompute.
// REQUIRES: `config` went through PruneStrategy, which returned `why`, whose
// reason starts with "memory: ".
std::optional<ParallelConfig> BlockRecomputeVariant(const models::TransformerConfig& model,
                                                    sim::Bytes gpu_memory,
                                                    const models::FinetuneSpec& finetune,
                                                    int num_gpus, const ParallelConfig& config,
                                                    const Pruning& why,
                                                    bool keep_non_layer_gathered = false);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SEARCH_SPACE_H_
