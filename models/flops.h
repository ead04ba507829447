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
// where d is the head dimension (kv_channels when set). MoE layers use the
// expert FFN size and add the shared experts' 3/2·f_shared (gated) term;
// dense-first layers use f with k = 1. Latent attention (MLA) counts 2·s per
// weight of its projections instead of the QKV/output term, and its core as
// 2·s²·a·(d_qk + d_v) per layer (6·L·a·(d_qk + d_v)·s per token in 6N).
// For GPT (f = 4h, MHA) this is 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)). NVIDIA's
// DGXC recipes use the same count; MFU divides model FLOPs by peak.
//
// Hardware FLOPs (HFU): also the recomputed forward. Full recompute re-runs
// each layer's forward (4x forward for layers, 3x for logits), which for GPT is
// Narayanan et al. 2021's 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)); selective
// recompute re-runs only the attention core, 4·B·s²·(a·d) per layer.
//
// The 6·N·D convention (Kaplan et al. 2020 §2.1, C ≈ 6N per token, forward
// 2N + backward 4N; PaLM, Chowdhery et al. 2022, App. B, adds attention:
// 6N + 12·L·H·Q·T per token, H·Q = a·d, T = s): N counts every parameter
// a token touches: all of them for dense models (embeddings included, as
// PaLM's 540B MFU does), the non-expert ones plus k/E of the routed experts
// for MoE. It ignores whether the LM head is tied and treats attention as
// unmasked, like Megatron. For GPT-3 shapes the two conventions agree to
// 0.1% (they differ by biases, norms and the position table); for untied
// models 6N also counts the input embedding lookup as matmul work. `mfu` uses
// Megatron's.
//
// Example:
//   double f = models::MegatronModelFlops(gpt3_175b, /*global_batch=*/1);   // 2.20e15
//   double g = models::SixNAttentionFlops(gpt3_175b, 1).Total();           // 2.20e15
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

// What full recompute's replay of layer `layer` (from 0) adds to
// MegatronHardwareFlops for `global_batch` sequences: that layer's forward
// GEMMs and attention core. Block recompute (ShardSpec::recompute_method)
// leaves it out for the layers it does not replay.
double LayerReplayFlops(const TransformerConfig& c, int64_t global_batch, int layer);

// Forward FLOPs of every layer's dense MLP input projection (fc1: up, and gate
// under SwiGLU) for `global_batch` sequences: what selective recompute with
// ShardSpec::recompute_mlp_up replays on top of the attention core.
double MlpUpForwardFlops(const TransformerConfig& c, int64_t global_batch);

// The GEMM FLOPs torchtitan's per-op selective checkpointing replays
// (ShardSpec::recompute_op_sac) for `global_batch` sequences of a dense
// model: wk, wo and (SwiGLU) w3 in 16-bit; QKV, wo and FC1 whole with fp8
// linears, which the policy does not save.
double OpSacForwardFlops(const TransformerConfig& c, int64_t global_batch, bool fp8_linears);

// What selective recompute's modules `m` (ShardSpec::modules) replay beyond
// MegatronHardwareFlops' selective count (the attention core), for
// `global_batch` sequences: the MLA up projections ("mla_up_proj") and the
// dense layers' MLP ("mlp"), less the attention core without "core_attn".
// Memory-bound replays (norms, activations) count no FLOPs. 0 unless `r` is
// kSelective.
double RecomputeModulesExtraFlops(const TransformerConfig& c, int64_t global_batch, Recompute r,
                                  const RecomputeModules& m);

struct SixNFlops {
  double parameters = 0;  // 6·N·tokens
  double attention = 0;   // 12·L·(a·d)·s·tokens
  double Total() const { return parameters + attention; }
};
// REQUIRES: ValidateTransformer(c).ok(), global_batch >= 0 (sequences of s tokens).
SixNFlops SixNAttentionFlops(const TransformerConfig& c, int64_t global_batch);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FLOPS_H_
