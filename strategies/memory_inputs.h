// File: strategies/memory_inputs.h
//
// The memory model's inputs (models/memory_model.h) for a parallel strategy:
// the shard one GPU holds and the pipeline, data-parallel and optimizer
// settings that size its states. The plain run, the search's pruning and the
// memory timeline all read memory through this one mapping.
//
// Example:
//   models::MemoryInputs in = MemoryInputsFor(model, config, finetune);
//   models::MemoryBreakdown m = models::EstimateMemory(in);
#ifndef CLUSTERSIM_STRATEGIES_MEMORY_INPUTS_H_
#define CLUSTERSIM_STRATEGIES_MEMORY_INPUTS_H_

#include "models/finetune.h"
#include "models/memory_model.h"
#include "models/transformer_config.h"
#include "strategies/parallel_config.h"

namespace clustersim::strategies {

// The memory model's inputs for a validated config (first pipeline stage).
models::MemoryInputs MemoryInputsFor(const models::TransformerConfig& model,
                                     const ParallelConfig& config,
                                     const models::FinetuneSpec& finetune);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_MEMORY_INPUTS_H_
