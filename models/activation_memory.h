// File: models/activation_memory.h
//
// The activations one training micro-batch keeps for its backward, per layer
// and per pipeline stage, as memory_model.h's header describes them
// (Korthikanti et al. 2022, Table 2, generalised to GQA, SwiGLU, MoE, MLA,
// hybrid Mamba layers and context parallelism), under each recompute choice.
// EstimateMemory sums these; activation offload copies the per-layer term.

#ifndef CLUSTERSIM_MODELS_ACTIVATION_MEMORY_H_
#define CLUSTERSIM_MODELS_ACTIVATION_MEMORY_H_

#include "models/transformer_config.h"
#include "models/workload.h"

namespace clustersim::models {

// The attention core's share of one layer's activations, in units of
// s'·b·h bytes (s' = s/cp) per the header: what selective recompute drops
// and what FlashAttention removes. 0 under full recompute and under selective
// recompute that replays the core (ShardSpec::modules.core_attn).
double AttentionCoreUnits(const TransformerConfig& c, const ShardSpec& s);

// One layer's saved activations for one micro-batch, bytes: the mean over the
// model's layers of the per-layer term above (what activation offload copies
// to the host per layer and micro-batch).
double MeanLayerActivationBytes(const TransformerConfig& c, const ShardSpec& s);

// Bytes one micro-batch keeps in the `layers` transformer layers of a stage
// split into `chunks` model chunks, by full recompute's method
// (ShardSpec::recompute_method): block keeps the first recompute_num_layers
// layers' input checkpoints of each chunk and the rest whole, uniform one
// checkpoint per group of recompute_num_layers layers.
double StageLayerActivationBytes(const TransformerConfig& c, const ShardSpec& s, int layers,
                                 int chunks);

// Uniform full recompute of groups of n > 1 layers: the replayed group's other
// n - 1 layers, held whole while its backward runs (0 otherwise).
double ReplayWindowBytes(const TransformerConfig& c, const ShardSpec& s, int layers, int chunks);

// Context parallelism's ring-attention K/V receive buffers during one layer's
// attention (0 without context parallelism).
double ContextRingBufferBytes(const TransformerConfig& c, const ShardSpec& s);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_ACTIVATION_MEMORY_H_
