#include "models/flops.h"

#include "models/hybrid_layers.h"
#include "models/transformer_config.h"

namespace clustersim::models {
namespace {

// Forward FLOPs per sequence, split as Megatron's formula does (2 FLOPs per MAC).
struct ForwardFlops {
  double layer_gemms = 0;      // QKV, output projection, MLP: all layers
  double attention_core = 0;   // QK^T and AV, unmasked: all layers
  double logits = 0;           // LM head
  double moe_layer = 0;        // one layer's GEMMs (every layer of a dense model)
  double dense_layer = 0;      // one dense layer's GEMMs in an MoE model
  // Hybrid models: one layer's GEMMs by kind (HybridIndex); a
  // Mamba layer's include its SSD scan.
  double hybrid_layer[kHybridKinds] = {};
};

ForwardFlops Forward(const TransformerConfig& c) {
  const double s = c.seq_length, h = c.hidden_size, L = c.num_layers, V = c.vocab_size;
  const double a = c.num_attention_heads, g = c.num_query_groups, f = c.ffn_hidden_size;
  const double attn_width = a * c.head_dim();  // query projection size
  const double gate = c.activation == Activation::kSwiglu ? 1.5 : 1.0;
  const double experts_per_token = c.num_experts > 0 ? c.moe_top_k : 1;
  // QKV: 2·s·h·(a+2g)·d; output projection: 2·s·(a·d)·h. Latent attention:
  // 2·s per weight of its down/up projections and output (CountParameters).
  double attention = 2.0 * s * h * attn_width * (2.0 + 2.0 * g / a);
  if (c.mla()) {
    const double qk = c.head_dim(), v = c.v_head_dim, rope = c.qk_rope_head_dim;
    const double q = c.q_lora_rank > 0 ? h * c.q_lora_rank + c.q_lora_rank * a * qk : h * a * qk;
    const double kv = h * (c.kv_lora_rank + rope) + c.kv_lora_rank * a * (c.qk_nope_head_dim + v);
    attention = 2.0 * s * (q + kv + a * v * h);
  }
  // MLP: 2·s·h·f·(2 or 3)·k for the routed experts (f = the expert FFN
  // size), plus the shared experts; the dense layers of an MoE model
  // (TransformerConfig::IsMoeLayer) run the dense MLP.
  const double shared =
      c.moe_shared_expert_ffn_size > 0 ? 4.0 * s * h * c.moe_shared_expert_ffn_size * gate : 0.0;
  const double moe_mlp = 4.0 * s * h * c.expert_ffn_size() * gate * experts_per_token + shared;
  const double dense_layers = c.num_experts > 0 ? c.num_dense_layers() : 0;
  ForwardFlops fwd;
  fwd.layer_gemms = (L - dense_layers) * (attention + moe_mlp) +
                    dense_layers * (attention + 4.0 * s * h * f * gate);
  fwd.moe_layer = attention + moe_mlp;
  fwd.dense_layer = attention + 4.0 * s * h * f * gate;
  // QK^T over the query/key head dimension, AV over the value dimension.
  const double attention_layers = c.num_attention_layers();
  fwd.attention_core = c.mla() ? attention_layers * 2.0 * s * s * a *
                                     (c.head_dim() + c.value_head_dim())
                               : attention_layers * 4.0 * s * s * attn_width;
  if (c.hybrid()) {
    const MambaFlops mamba = MambaMixerForwardFlops(c);
    const double by_kind[kHybridKinds] = {mamba.projections + mamba.scan, attention,
                                          4.0 * s * h * f * gate, moe_mlp};
    fwd.layer_gemms = 0;
    for (LayerKind kind : kHybridLayerKinds) {
      fwd.layer_gemms += c.num_layers_of(kind) * by_kind[HybridIndex(kind)];
    }
    for (int k = 0; k < kHybridKinds; ++k) fwd.hybrid_layer[k] = by_kind[k];
  }
  fwd.logits = 2.0 * s * h * V;
  return fwd;
}

}  // namespace

double MegatronModelFlops(const TransformerConfig& c, int64_t global_batch) {
  const ForwardFlops fwd = Forward(c);
  return 3.0 * static_cast<double>(global_batch) *
         (fwd.layer_gemms + fwd.attention_core + fwd.logits);
}

double MegatronHardwareFlops(const TransformerConfig& c, int64_t global_batch, Recompute r) {
  const ForwardFlops fwd = Forward(c);
  double recomputed = 0;
  if (r == Recompute::kFull) recomputed = fwd.layer_gemms + fwd.attention_core;
  if (r == Recompute::kSelective) recomputed = fwd.attention_core;
  return MegatronModelFlops(c, global_batch) + static_cast<double>(global_batch) * recomputed;
}

double LayerReplayFlops(const TransformerConfig& c, int64_t global_batch, int layer) {
  const ForwardFlops fwd = Forward(c);
  if (c.hybrid()) {
    const LayerKind kind = c.Kind(layer);
    const double core =
        kind == LayerKind::kAttention ? fwd.attention_core / c.num_attention_layers() : 0.0;
    return static_cast<double>(global_batch) * (fwd.hybrid_layer[HybridIndex(kind)] + core);
  }
  const bool dense = c.num_experts > 0 && !c.IsMoeLayer(layer);
  return static_cast<double>(global_batch) *
         ((dense ? fwd.dense_layer : fwd.moe_layer) + fwd.attention_core / c.num_layers);
}

double MlpUpForwardFlops(const TransformerConfig& c, int64_t global_batch) {
  const double fc1_width =
      (c.activation == Activation::kSwiglu ? 2.0 : 1.0) * static_cast<double>(c.ffn_hidden_size);
  const int mlp_layers = c.hybrid() ? c.num_dense_layers() : c.num_layers;
  return static_cast<double>(global_batch) * mlp_layers * 2.0 * c.seq_length * c.hidden_size *
         fc1_width;
}

double RecomputeModulesExtraFlops(const TransformerConfig& c, int64_t global_batch, Recompute r,
                                  const RecomputeModules& m) {
  if (r != Recompute::kSelective) return 0;
  const double s = c.seq_length, h = c.hidden_size, a = c.num_attention_heads;
  double per_sequence = m.core_attn ? 0.0 : -Forward(c).attention_core;
  if (m.mla_up_proj && c.mla()) {
    const double q_up = c.q_lora_rank > 0 ? c.q_lora_rank * a * c.head_dim() : h * a * c.head_dim();
    const double kv_up = static_cast<double>(c.kv_lora_rank) * a * (c.qk_nope_head_dim + c.v_head_dim);
    per_sequence += c.num_layers * 2.0 * s * (q_up + kv_up);
  }
  if (m.mlp) {
    const double gate = c.activation == Activation::kSwiglu ? 1.5 : 1.0;
    const double dense_layers = c.num_dense_layers();
    per_sequence += dense_layers * 4.0 * s * h * c.ffn_hidden_size * gate;
  }
  return static_cast<double>(global_batch) * per_sequence;
}

double OpSacForwardFlops(const TransformerConfig& c, int64_t global_batch, bool fp8_linears) {
  const double s = c.seq_length, h = c.hidden_size, d = c.head_dim();
  const double a = c.num_attention_heads, g = c.num_query_groups, f = c.ffn_hidden_size;
  const bool swiglu = c.activation == Activation::kSwiglu;
  const double out_proj = 2.0 * s * a * d * h;
  const double per_layer = fp8_linears ? 2.0 * s * h * (a + 2.0 * g) * d + out_proj +
                                             2.0 * s * h * f * (swiglu ? 2.0 : 1.0)
                                       : 2.0 * s * h * g * d + out_proj +
                                             (swiglu ? 2.0 * s * h * f : 0.0);
  return static_cast<double>(global_batch) * c.num_layers * per_layer;
}

SixNFlops SixNAttentionFlops(const TransformerConfig& c, int64_t global_batch) {
  const ParameterCounts p = CountParameters(c);
  const double inactive_experts =
      c.num_experts > 0 ? p.expert_per_layer * (1.0 - static_cast<double>(c.moe_top_k) /
                                                          c.num_experts)
                        : 0.0;
  const double active = p.Total(c.num_layers) - c.num_layers * inactive_experts;
  const double tokens = static_cast<double>(global_batch) * c.seq_length;
  SixNFlops f;
  f.parameters = 6.0 * active * tokens;
  f.attention = c.mla() ? 6.0 * c.num_attention_layers() * c.num_attention_heads *
                              (c.head_dim() + c.value_head_dim()) *
                              static_cast<double>(c.seq_length) * tokens
                        : 12.0 * c.num_attention_layers() * c.num_attention_heads * c.head_dim() *
                              static_cast<double>(c.seq_length) * tokens;
  return f;
}

}  // namespace clustersim::models
