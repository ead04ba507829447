// File: models/flops.h
//
// FLOPs per training iteration in the conventions users compare against.
//
// Model FLOPs: Megatron-LM's num_floating_point_operations
// (megatron/training/training.py; GQA, SwiGLU and MoE aware), which counts
// forward + backward (3x forward) GEMMs and unmasked attention:
//   F = 12·B·s·L·h² · ( (1 + g/a + s/h)·(a·d/h)  [attention]
//                      + (f/h)·k·gate             [MLP; gate 3/2 for SwiGLU, k = top-k or 1]
//                      + V/(2·L·h) )              [logits]
// For GPT (f = 4h, MHA) this is 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)). NVIDIA's
// DGXC recipes use the same count; MFU divides model FLOPs by peak.
//
// Hardware FLOPs (HFU): also the recomputed forward. Full recompute re-runs
// each layer's forward (4x forward for layers, 3x for logits), which for GPT is
// Narayanan et al. 2021's 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)); selective
// recompute re-runs only the attention core, 4·B·s²·(a·d) per layer.
//
// Example:
//   double f = models::MegatronModelFlops(gpt3_175b, /*global_batch=*/1);   // 2.20e15
#ifndef CLUSTERSIM_MODELS_FLOPS_H_
#define CLUSTERSIM_MODELS_FLOPS_H_

#include <cstdint>

#include "models/transformer_config.h"
#include "models/workload.h"

namespace clustersim::models {

// REQUIRES: ValidateTransformer(c).ok(), global_batch >= 0 (sequences).
double MegatronModelFlops(const TransformerConfig& c, int64_t global_batch);

// Model FLOPs plus the recomputed forward work of `r`.
double MegatronHardwareFlops(const TransformerConfig& c, int64_t global_batch, Recompute r);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FLOPS_H_
