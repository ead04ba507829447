#include "models/activation_memory.h"

#include <algorithm>

namespace clustersim::models {
namespace {

// Activation bytes of one layer for one micro-batch (Korthikanti Table 2,
// generalised to GQA, SwiGLU and context parallelism; see memory_model.h).
// `moe` selects the MoE MLP (routed experts of the expert FFN size plus the
// shared experts) or the dense one. A hybrid layer (`kind` other than
// kTransformer) keeps its one block's share: the mixer's half of the
// replicated 10·s·b·h (its norm and projection inputs and dropout mask) with
// attention's or the Mamba mixer's sharded tensors, or the MLP's half with
// the MLP's. The Mamba mixer keeps what Megatron-Core's fused path
// (mamba_ssm ops/triton/ssd_combined.py MambaSplitConv1dScanCombinedFn, which
// recomputes the conv1d output and the chunk states in backward) saves: the
// in_proj output and the scan output, plus out_proj's input.
double LayerActivationBytes(const TransformerConfig& c, const ShardSpec& s, bool moe,
                            LayerKind kind = LayerKind::kTransformer) {
  const double t = s.tensor_parallel;
  const bool sp = s.sequence_parallel && s.tensor_parallel > 1;
  const double tokens = static_cast<double>(s.micro_batch_size) * c.seq_length / s.context_parallel;
  const double h = c.hidden_size, a = c.num_attention_heads;
  const double f = moe ? c.expert_ffn_size() : c.ffn_hidden_size;
  const double g = c.num_query_groups;
  const double sbh = tokens * h;
  const double replicated_div = sp ? t : 1.0;
  const double scale = std::max(2, BytesPerElement(s.dtype)) / 2.0;  // 16-bit baseline
  if (s.recompute == Recompute::kFull) return scale * 2.0 * sbh / replicated_div;
  const bool gated = c.activation == Activation::kSwiglu;
  const double fc1_width = gated ? 2.0 * f : f;
  // Korthikanti's 10·s·b·h kept whole on every TP rank without sequence
  // parallelism: both norms' inputs (4), the QKV and fc1 inputs (2 each) and
  // two dropout masks. Replaying the MLP's input side (recompute_mlp_up)
  // drops the fc1 input, fc1's output and the activation's.
  const bool selective = s.recompute == Recompute::kSelective;
  const bool mlp_up = selective && s.recompute_mlp_up && !moe;
  // Recompute modules (ShardSpec::modules): "layernorm" drops both norms'
  // outputs (the QKV and fc1 inputs), "mlp" a dense MLP's fc1 and activation
  // outputs (its input is the checkpoint), "moe_act" the experts' activation
  // outputs, "mla_up_proj" the up-projected query, key and value.
  const RecomputeModules& m = s.modules;
  const double replicated = (mlp_up ? 8.0 : 10.0) - (selective && m.layernorm ? 4.0 : 0.0);
  double mlp = mlp_up || (selective && m.mlp && !moe) ? 0.0 : (2.0 * fc1_width + 2.0 * f) / h;
  if (moe && selective && m.moe_act) mlp = 2.0 * fc1_width / h;
  double moe_full = 0;  // expert inputs, gathered over tp: whole on every TP rank
  if (moe) {
    const double routed = c.moe_top_k * c.moe_capacity_factor;
    mlp *= routed;
    // fp32 router probabilities of the rank's own (sequence-parallel) tokens;
    // with expert TP 1 the expert inputs are not gathered over tp either.
    const double expert_input_div = s.ExpertTp() > 1 ? 1.0 : replicated_div;
    moe_full = 2.0 * routed / expert_input_div + 4.0 * c.num_experts / h / replicated_div;
    if (const double fs = c.moe_shared_expert_ffn_size; fs > 0) {
      mlp += (2.0 * (gated ? 2.0 * fs : fs) + 2.0 * fs) / h;
    }
  }
  // QKV outputs (4·g/a for K and V when a·d = h), the attention input and output.
  double attention = 2.0 + 4.0 * g / a + 2.0;
  if (c.kv_channels > 0 || c.mla()) {
    const double dq = c.head_dim(), dv = c.value_head_dim();
    attention = (2.0 * a * dq + 2.0 * g * (dq + dv) + 2.0 * a * dv) / h;
    if (c.mla() && selective && m.mla_up_proj) attention = 2.0 * a * dv / h;
  }
  double latent = 0;  // MLA: the q and kv latents and their norms, on every TP rank
  if (c.mla()) latent = 4.0 * (c.q_lora_rank + c.kv_lora_rank + c.qk_rope_head_dim) / h;
  if (kind != LayerKind::kTransformer) {
    const double mixer_replicated = 5.0 - (selective && m.layernorm ? 2.0 : 0.0);
    double units = 0;
    switch (kind) {
      case LayerKind::kMamba:
        units = mixer_replicated / replicated_div +
                (2.0 * c.mamba_in_proj_width() + 4.0 * c.mamba_d_inner()) / h / t;
        break;
      case LayerKind::kAttention:
        units = mixer_replicated / replicated_div + attention / t + latent +
                AttentionCoreUnits(c, s);
        break;
      default:
        units = (replicated - mixer_replicated) / replicated_div + mlp / t + moe_full;
        break;
    }
    return scale * units * sbh;
  }
  const double sharded = attention + mlp;
  double units = replicated / replicated_div + sharded / t + moe_full + latent;
  units += AttentionCoreUnits(c, s);
  return scale * units * sbh;
}

}  // namespace

double AttentionCoreUnits(const TransformerConfig& c, const ShardSpec& s) {
  // Full recompute, and selective with the "core_attn" module, replay the core.
  if (s.recompute == Recompute::kFull) return 0;
  if (s.recompute == Recompute::kSelective && s.modules.core_attn) return 0;
  const double a = c.num_attention_heads, h = c.hidden_size, t = s.tensor_parallel;
  if (c.attention_backend == AttentionBackend::kUnfused) {
    // Korthikanti Table 2: softmax output 2·a·s², its dropout mask a·s² and
    // the dropout output 2·a·s² per sample, over s·h (s = keys = s/cp).
    const double s_local = static_cast<double>(c.seq_length) / s.context_parallel;
    return 5.0 * a * s_local / (h * t);
  }
  // FlashAttention keeps the softmax statistics: one fp32 logsumexp per head
  // and query token (4·a·s' bytes per sample, a/t heads on a TP rank).
  return 4.0 * a / (h * t);
}

double MeanLayerActivationBytes(const TransformerConfig& c, const ShardSpec& s) {
  if (c.hybrid()) {
    double sum = 0;
    for (LayerKind kind : kHybridLayerKinds) {
      if (const int n = c.num_layers_of(kind); n > 0) {
        sum += n * LayerActivationBytes(c, s, kind == LayerKind::kMoe, kind);
      }
    }
    return sum / c.num_layers;
  }
  const double moe = LayerActivationBytes(c, s, c.num_experts > 0);
  const int dense = c.num_experts > 0 ? c.num_dense_layers() : 0;
  if (dense == 0) return moe;
  return ((c.num_layers - dense) * moe + dense * LayerActivationBytes(c, s, false)) / c.num_layers;
}

// Activation bytes one micro-batch keeps in the `layers` transformer layers
// of a stage split into `chunks` model chunks (as evenly as they divide), by
// full recompute's method (ShardSpec::recompute_method; Megatron-Core
// TransformerBlock._checkpointed_forward, per chunk). Block: the first
// recompute_num_layers layers of each chunk keep their input checkpoint, the
// others everything, as without recompute. Uniform: one checkpoint per group
// of recompute_num_layers layers (a chunk's last group may be shorter).
// Every other recompute keeps the same bytes in each layer.
double StageLayerActivationBytes(const TransformerConfig& c, const ShardSpec& s, int layers,
                                 int chunks) {
  const double per_layer = MeanLayerActivationBytes(c, s);
  if (s.recompute != Recompute::kFull) return per_layer * layers;
  const int n = s.recompute_num_layers;
  const bool block = s.recompute_method == RecomputeMethod::kBlock;
  int checkpoints = 0, kept = 0;
  for (int k = 0; k < chunks; ++k) {
    const int in_chunk = layers / chunks + (k < layers % chunks ? 1 : 0);
    checkpoints += block ? std::min(n, in_chunk) : (in_chunk + n - 1) / n;
    if (block) kept += in_chunk - std::min(n, in_chunk);
  }
  if (kept == 0) return per_layer * checkpoints;
  ShardSpec none = s;
  none.recompute = Recompute::kNone;
  return per_layer * checkpoints + MeanLayerActivationBytes(c, none) * kept;
}

// Uniform full recompute of groups of n > 1 layers: while a group's backward
// runs, the forward it replays holds the activations of all its layers at
// once, for one micro-batch. Counted beyond the one layer's that the per-layer
// accounting of full recompute (n = 1) leaves out, as Korthikanti et al.'s
// does: n - 1 layers without recompute, n at most the largest chunk.
double ReplayWindowBytes(const TransformerConfig& c, const ShardSpec& s, int layers, int chunks) {
  if (s.recompute != Recompute::kFull || s.recompute_method != RecomputeMethod::kUniform) return 0;
  const int largest_chunk = (layers + chunks - 1) / chunks;
  const int window = std::min(s.recompute_num_layers, largest_chunk);
  if (window <= 1) return 0;
  ShardSpec none = s;
  none.recompute = Recompute::kNone;
  return (window - 1) * MeanLayerActivationBytes(c, none);
}

// Context parallelism: Transformer Engine's ring attention receives the next
// K/V chunk (backward: K/V and dK/dV) while computing on the current one, into
// double buffers: 2 x (K/V + dK/dV) chunks of b·(s/cp)·2·(g/t)·d 16-bit
// values, held during one layer's attention (transient, not per layer).
double ContextRingBufferBytes(const TransformerConfig& c, const ShardSpec& s) {
  if (s.context_parallel <= 1) return 0;
  const double kv_chunk = 2.0 * s.micro_batch_size * c.seq_length / s.context_parallel *
                          c.num_query_groups / s.tensor_parallel * c.head_dim() * 2.0;
  return 2.0 * 2.0 * kv_chunk;
}

}  // namespace clustersim::models
