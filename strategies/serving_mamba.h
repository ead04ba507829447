// File: strategies/serving_mamba.h
//
// Serving a hybrid Mamba-Transformer model (models::TransformerConfig::
// hybrid_pattern): each layer runs one block, and a Mamba layer keeps a
// fixed-size state per sequence (models/inference_memory.h) instead of a
// growing KV cache. The per-iteration ops are ServingCostModel::HybridLayerOps
// and MambaStateOps (strategies/serving_iteration.h), defined in
// serving_mamba.cc.
#ifndef CLUSTERSIM_STRATEGIES_SERVING_MAMBA_H_
#define CLUSTERSIM_STRATEGIES_SERVING_MAMBA_H_

#include "absl/status/status.h"
#include "models/inference_memory.h"

namespace clustersim::strategies {

// InvalidArgument naming inference.tensor_parallel_size when it does not
// divide the Mamba mixer's heads and groups, or inference.expert_parallel_size
// when data-parallel attention (ep > 1) meets Mamba layers (not modelled).
absl::Status ValidateServingMamba(const models::ReplicaModel& replica);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_MAMBA_H_
