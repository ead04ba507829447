// File: models/hybrid_layers.h
//
// Hybrid Mamba-Transformer models (TransformerConfig::hybrid_pattern): the
// pattern's validation and the Mamba-2 mixer's parameters and forward FLOPs,
// which the parameter count, the FLOP formulas and the memory model share.
//
// Example:
//   models::TransformerConfig m = *models::ModelCatalog::Default().Find("nemotron-h-56b");
//   double mixer = models::MambaMixerWeights(m).total;   // 438.6e6 per 'M' layer
#ifndef CLUSTERSIM_MODELS_HYBRID_LAYERS_H_
#define CLUSTERSIM_MODELS_HYBRID_LAYERS_H_

#include "absl/status/status.h"
#include "models/transformer_config.h"

namespace clustersim::models {

// OK for a model without a pattern; else InvalidArgument naming the field
// when the pattern's length is not num_layers, a character is not one of
// M * - E, 'E' appears without experts (or experts without 'E'), the Mamba
// sizes are not positive, or a transformer-only field (moe_first_dense_layers,
// moe_layer_step, mtp_num_layers) is set.
absl::Status ValidateHybrid(const TransformerConfig& c);

// One Mamba-2 mixer's parameters (Megatron-Core MambaMixer, no linear
// biases): in_proj h x (2·d_inner + 2·G·N + H), conv1d (d_inner + 2·G·N)
// channels of conv_kernel taps plus a bias each, dt_bias, A_log and D (H
// each), the gated RMSNorm's d_inner weights, out_proj d_inner x h. The
// layer's pre-norm is not included.
struct MambaWeights {
  double linear = 0;  // in_proj and out_proj
  double total = 0;
};
MambaWeights MambaMixerWeights(const TransformerConfig& c);

// Forward FLOPs of one Mamba-2 mixer over one sequence of seq_length tokens:
// in_proj and out_proj (2 per weight and token) and the SSD scan's matmuls
// counted without the causal mask (2·s·H·P·(2·N + Q) + 2·s·Q·N·G, Dao & Gu
// 2024 §6; the kernels' executed FLOPs are models/mamba_scan.h's), whole
// model (not per TP rank).
struct MambaFlops {
  double projections = 0;
  double scan = 0;
};
MambaFlops MambaMixerForwardFlops(const TransformerConfig& c);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_HYBRID_LAYERS_H_
