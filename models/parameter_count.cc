// Parameter counts of a transformer or hybrid model, per layer (means over
// the layers where they differ), embedding, final norm and LM head.
#include "models/hybrid_layers.h"
#include "models/transformer_config.h"

namespace clustersim::models {
ParameterCounts CountParameters(const TransformerConfig& c) {
  const double h = c.hidden_size, f = c.ffn_hidden_size, V = c.vocab_size, s = c.seq_length;
  const double a = c.num_attention_heads, g = c.num_query_groups, d = c.head_dim();
  const bool gated = c.activation == Activation::kSwiglu;
  const double norm_size = c.norm == Norm::kLayerNorm ? 2.0 : 1.0;
  double attention = 2.0 * h * d * (a + g);
  double latent_norms = 0;
  if (c.mla()) {
    const double qk = c.head_dim(), rope = c.qk_rope_head_dim, v = c.v_head_dim;
    const double q = c.q_lora_rank > 0 ? h * c.q_lora_rank + c.q_lora_rank * a * qk : h * a * qk;
    const double kv = h * (c.kv_lora_rank + rope) + c.kv_lora_rank * a * (c.qk_nope_head_dim + v);
    attention = q + kv + a * v * h;
    latent_norms = (c.q_lora_rank + c.kv_lora_rank) * norm_size;
  }
  auto mlp = [&](double width) { return (gated ? 3.0 : 2.0) * h * width; };
  auto mlp_bias = [&](double width) {
    return c.add_bias_linear ? width * (gated ? 2.0 : 1.0) + h : 0.0;
  };
  const double fe = c.expert_ffn_size(), fs = c.moe_shared_expert_ffn_size;
  const double mlp_one = mlp(fe);
  const double experts = c.num_experts > 0 ? c.num_experts : 1;
  const double router = c.num_experts > 0 ? h * c.num_experts : 0.0;
  const double shared = fs > 0 ? mlp(fs) + mlp_bias(fs) : 0.0;
  const double shared_linear = fs > 0 ? mlp(fs) : 0.0;
  const double attention_bias = c.add_bias_linear ? (a + 2.0 * g) * d + h : 0.0;
  const double common = attention + attention_bias + latent_norms + 2.0 * h * norm_size;

  ParameterCounts p;
  if (c.hybrid()) {
    // One block per layer, each with its pre-norm; means over the layers.
    const MambaWeights mamba = MambaMixerWeights(c);
    const double norm = h * norm_size, L = c.num_layers;
    const double moe_linear = experts * mlp_one + shared_linear;
    const double moe_total = experts * (mlp_one + mlp_bias(fe)) + router + shared;
    for (int l = 0; l < c.num_layers; ++l) {
      switch (c.Kind(l)) {
        case LayerKind::kMamba:
          p.per_layer += norm + mamba.total;
          p.linear_per_layer += mamba.linear;
          break;
        case LayerKind::kAttention:
          p.per_layer += norm + attention + attention_bias + latent_norms;
          p.linear_per_layer += attention;
          break;
        case LayerKind::kMlp:
          p.per_layer += norm + mlp(f) + mlp_bias(f);
          p.linear_per_layer += mlp(f);
          break;
        default:
          p.per_layer += norm + moe_total;
          p.linear_per_layer += moe_linear;
          p.expert_per_layer += experts * (mlp_one + mlp_bias(fe));
          break;
      }
    }
    p.per_layer /= L;
    p.linear_per_layer /= L;
    p.expert_per_layer /= L;
  } else {
    // The layers with experts (every layer for a dense model), then the mean
    // with the dense-first layers.
    p.per_layer = common + experts * (mlp_one + mlp_bias(fe)) + router + shared;
    p.expert_per_layer = c.num_experts > 0 ? experts * (mlp_one + mlp_bias(fe)) : 0.0;
    p.linear_per_layer = attention + experts * mlp_one + shared_linear;
    if (const int dense = c.num_experts > 0 ? c.num_dense_layers() : 0; dense > 0) {
      const double L = c.num_layers, moe = L - dense;
      p.per_layer = (moe * p.per_layer + dense * (common + mlp(f) + mlp_bias(f))) / L;
      p.expert_per_layer = moe * p.expert_per_layer / L;
      p.linear_per_layer = (moe * p.linear_per_layer + dense * (attention + mlp(f))) / L;
    }
  }
  p.embedding = V * h + (c.learned_position_embeddings ? s * h : 0.0);
  p.final_norm = h * norm_size;
  p.lm_head = c.tied_embeddings ? 0.0 : V * h;
  return p;
}

}  // namespace clustersim::models
