// File: models/transformer_config.h
//
// A decoder-only transformer architecture in Megatron-LM vocabulary, its
// validation, the shipped presets (parsed once from the embedded
// models/data/models.textproto) and its parameter count.
//
// Example:
//   absl::StatusOr<models::TransformerConfig> m =
//       models::ModelCatalog::Default().Find("llama3-70b");
//   if (!m.ok()) return m.status();          // message lists the preset names
//   m->seq_length = 4096;                    // override, then re-validate
//   if (absl::Status s = models::ValidateTransformer(*m); !s.ok()) return s;
//   double params = models::CountParameters(*m).Total(m->num_layers);   // 70.55e9
#ifndef CLUSTERSIM_MODELS_TRANSFORMER_CONFIG_H_
#define CLUSTERSIM_MODELS_TRANSFORMER_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace clustersim::models {

// The MLP nonlinearity. kGelu and kSquaredRelu (Nemotron-4, HF "relu2") are
// non-gated two-matrix MLPs (h→f→h); kSwiglu is the gated three-matrix MLP
// (gate and up h→f, down f→h).
enum class Activation { kGelu, kSwiglu, kSquaredRelu };
enum class Norm { kLayerNorm, kRmsNorm };

// How the attention core (softmax(Q·K^T)·V) is computed, Megatron-core's
// TransformerConfig.attention_backend (flash, unfused; its fused/auto/local
// variants are not distinguished). Scenario field training.attention.
//   kFlash: one fused, IO-aware kernel (FlashAttention, Dao et al. 2022); the
//     b·a·s² scores never reach memory; backward recomputes them.
//   kUnfused: Megatron-LM before FlashAttention (Narayanan et al. 2021,
//     Korthikanti et al. 2022): batched GEMMs Q·K^T and P·V with a fused
//     scale-mask-softmax and a dropout over the b·a·s² scores in between, all
//     of which are kept for backward.
enum class AttentionBackend { kFlash, kUnfused };
std::string_view AttentionBackendName(AttentionBackend b);  // "flash" | "unfused"
// InvalidArgument naming training.attention when `name` is neither.
absl::StatusOr<AttentionBackend> ParseAttentionBackend(std::string_view name);

// How the normalisation, rotary embedding and gated activation of a layer
// reach the GPU. Scenario field training.elementwise.
//   kFused: one kernel each, reading its inputs and writing its output once
//     (Megatron's and Transformer Engine's fused kernels, XLA, torch.compile).
//   kEager: eager PyTorch running the model's Python code op by op: RMSNorm,
//     RoPE and SwiGLU are composites of several elementwise kernels, each
//     reading and writing its whole tensor from HBM (fp32 intermediates
//     included) and launched from Python (models/workload.h lists them).
//     LayerNorm and GeLU are single ATen kernels either way.
enum class ElementwiseKernels { kFused, kEager };
std::string_view ElementwiseKernelsName(ElementwiseKernels e);  // "fused" | "eager"
// InvalidArgument naming `field` when `name` is neither.
absl::StatusOr<ElementwiseKernels> ParseElementwiseKernels(std::string_view name,
                                                           std::string_view field);

// What one layer holds (TransformerConfig::Kind). A transformer layer is
// attention then an MLP (dense, or mixture-of-experts where IsMoeLayer); a
// hybrid model (TransformerConfig::hybrid_pattern) has layers of one block
// each, Megatron-Core's MambaModel: a Mamba-2 mixer, self-attention, a dense
// MLP or a mixture-of-experts MLP, each behind its own pre-norm and residual.
enum class LayerKind { kTransformer, kMamba, kAttention, kMlp, kMoe };
inline constexpr int kHybridKinds = 4;  // kMamba .. kMoe
inline constexpr LayerKind kHybridLayerKinds[kHybridKinds] = {
    LayerKind::kMamba, LayerKind::kAttention, LayerKind::kMlp, LayerKind::kMoe};
// A hybrid kind's index, 0 .. kHybridKinds - 1, for tables by kind.
inline int HybridIndex(LayerKind k) {
  return static_cast<int>(k) - static_cast<int>(LayerKind::kMamba);
}
// "transformer", "mamba", "attention", "mlp", "moe".
std::string_view LayerKindName(LayerKind k);

struct TransformerConfig {
  std::string name;
  int num_layers = 0, hidden_size = 0, ffn_hidden_size = 0, num_attention_heads = 0;
  int num_query_groups = 0;             // == heads for MHA
  int seq_length = 0, vocab_size = 0;   // vocab_size = padded vocab
  Activation activation = Activation::kGelu;
  Norm norm = Norm::kLayerNorm;
  bool tied_embeddings = true;          // GPT-style shares input embedding and LM head
  bool learned_position_embeddings = true;  // GPT: an s x h table; false for RoPE/ALiBi
  // ALiBi (Press et al. 2022, BLOOM): a per-head linear bias added to the
  // attention scores instead of a position table. Costs memory traffic on the
  // unfused attention path only (models/workload_attention.cc).
  bool alibi = false;
  bool add_bias_linear = true;          // GPT: biases on every linear layer; Llama: none
  int num_experts = 0, moe_top_k = 0;   // 0 = dense
  // MoE: expert capacity as a multiple of the balanced load, Megatron-LM's
  // --moe-expert-capacity-factor: each expert processes
  // ceil(k·tokens/E · moe_capacity_factor) tokens (1.0 = perfectly balanced,
  // no dropping or padding). Ignored for dense models.
  double moe_capacity_factor = 1.0;
  // A training choice rather than architecture, kept here as Megatron-core
  // does so that the workload and the memory model read the same value.
  AttentionBackend attention_backend = AttentionBackend::kFlash;
  // A training choice too (the stack's kernels), read by the workload.
  ElementwiseKernels elementwise = ElementwiseKernels::kFused;
  // Tensor parallelism as PyTorch DTensor runs it (the framework profile's
  // tp_keeps_gathered_input): autograd keeps the sequence-parallel
  // all-gathered input of each column-parallel GEMM for its weight gradient,
  // so the backward does not gather it again.
  bool tp_keeps_gathered_input = false;
  // Unfused attention's softmax (the framework profile's
  // fused_softmax_max_keys): the longest key sequence Megatron's fused
  // scale-mask-softmax kernel takes; shapes it does not take run PyTorch's
  // fallback (models::Dims::torch_softmax). 0: the fused kernel always applies.
  int fused_softmax_max_keys = 0;
  // Loading each micro-batch's data synchronises the host with the GPU (the
  // framework profile's data_broadcast_host_sync): the embedding's forward
  // launches only once the GPU has finished the work queued before it.
  bool data_broadcast_host_sync = false;
  // FP8 steps all-gather the column-parallel GEMMs' inputs and the
  // row-parallel GEMMs' output gradients in float8 (training.fp8_tp_gather).
  bool fp8_tp_gather = false;
  // Attention head dimension (Megatron --kv-channels, HF head_dim); 0 =
  // hidden_size / num_attention_heads. Qwen3 (128 with h/a = 64), gpt-oss (64).
  int kv_channels = 0;
  // MoE: one routed expert's FFN size (Megatron --moe-ffn-hidden-size, HF
  // moe_intermediate_size); 0 = ffn_hidden_size. ffn_hidden_size stays the
  // size of the dense layers' MLP.
  int moe_ffn_hidden_size = 0;
  // MoE: total FFN size of the shared experts every token passes through
  // (Megatron --moe-shared-expert-intermediate-size = DeepSeek
  // n_shared_experts x moe_intermediate_size, Qwen2-MoE
  // shared_expert_intermediate_size); 0 = none.
  int moe_shared_expert_ffn_size = 0;
  // MoE: the first layers are dense, with an MLP of ffn_hidden_size
  // (DeepSeek first_k_dense_replace = 3); 0 = every layer is MoE.
  int moe_first_dense_layers = 0;
  // MoE: dense and MoE layers interleave, Hugging Face's
  // interleave_moe_layer_step (Llama 4) and decoder_sparse_step (Qwen-MoE):
  // layer i (from 0) has experts when (i + 1) % moe_layer_step == 0, so 2
  // makes layers 1, 3, 5, ... MoE and the others dense (an MLP of
  // ffn_hidden_size). Megatron-Core writes that as the list
  // moe_layer_freq = [0, 1] * (L / 2) (NeMo's Llama4Experts128Config); its
  // integer form N puts experts on layers i % N == 0 instead
  // (megatron/core/models/gpt/gpt_layer_specs.py get_gpt_decoder_block_spec,
  // NVIDIA/Megatron-LM @efbfb5f05e). 0 or 1 = every layer (after the
  // dense-first ones).
  int moe_layer_step = 0;
  // MoE: the router's skew, as the coefficient of variation (std / mean) of
  // the routed rows the experts of one layer receive in one iteration; 0 =
  // uniform routing. Serving's expert-parallel cost waits for the busiest
  // rank under it (strategies/serving_moe_routing.h). DeepSeek-R1: 1.28
  // (models/data/models.textproto).
  double moe_expert_load_cv = 0;
  // The weight block of the model's FP8 checkpoint (HF quantization_config
  // weight_block_size: DeepSeek-V3/R1 scale their FP8 weights per 128 x 128
  // block and their activations per 1 x 128 group, "activation_scheme":
  // "dynamic"); 0 = a per-tensor FP8 checkpoint. On GPUs without
  // block-scaled tensor cores serving quantizes each such GEMM's input in
  // a kernel of its own (strategies/serving_moe.h).
  int fp8_weight_block = 0;
  // Multi-head latent attention (DeepSeek-V2 §2.1, arXiv 2405.04434), on when
  // kv_lora_rank > 0: queries through a q_lora_rank bottleneck (0 = a plain
  // h -> a·(nope + rope) projection), keys and values through one shared
  // kv_lora_rank latent plus a qk_rope_head_dim decoupled RoPE key; per head
  // a query/key dimension qk_nope_head_dim + qk_rope_head_dim and a value
  // dimension v_head_dim. num_query_groups must equal num_attention_heads.
  int q_lora_rank = 0, kv_lora_rank = 0;
  int qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  // Multi-token prediction modules trained with the model (DeepSeek-V3 §2.2,
  // Megatron-Core --mtp-num-layers; HF num_nextn_predict_layers): each is one
  // more transformer layer plus its input projection and a pass through the
  // shared output layer, on the last pipeline stage. A training choice, like
  // attention_backend; 0 = none.
  int mtp_num_layers = 0;
  // Gated-activation variants (gpt-oss; HF swiglu_limit, Megatron-Core
  // activation_func_clamp_value / quick_gelu with glu_linear_offset 1):
  // glu_clamp > 0 clamps the gate half to at most the limit and the linear
  // half to ±limit before the GLU; quick_gelu_glu gates with
  // x·sigmoid(1.702·x) and adds 1 to the linear half. The GEMM shapes are
  // SwiGLU's; what changes is how Megatron-Core's grouped experts run the
  // activation (models/workload_architecture.cc). Need activation kSwiglu.
  double glu_clamp = 0;
  bool quick_gelu_glu = false;
  // YaRN rotary-embedding scaling factor (HF rope_scaling.factor with
  // rope_type "yarn", Megatron-Core yarn_rotary_scaling_factor); 0 = plain
  // RoPE. Its attention-concentration factor 0.1·ln(factor) + 1 scales cos
  // and sin, which Transformer Engine's fused RoPE does not take:
  // Megatron-Core then rotates Q and K with its unfused PyTorch code.
  double yarn_rope_factor = 0;
  // Sliding-window (local) attention: in sliding_window_layers of the
  // attention layers each query attends to at most sliding_window keys (its
  // own position and the w - 1 before it: HF sliding_window, FlashAttention's
  // window_size = (w - 1, 0)); the others attend causally to all. 0 = none.
  // Every layer runs the same op list, so the attention ops carry the
  // windowed layers' share and are costed as the layers' mean
  // (models/attention_window.h).
  int64_t sliding_window = 0;
  int sliding_window_layers = 0;
  double sliding_window_share() const {
    return sliding_window > 0 && num_attention_layers() > 0
               ? static_cast<double>(sliding_window_layers) / num_attention_layers()
               : 0.0;
  }
  // Whether Megatron-Core falls back to its unfused RoPE (YaRN with a
  // concentration factor other than 1: megatron/core/models/common/
  // embeddings/rope_utils.py apply_rotary_pos_emb, "mscale ... is not
  // supported by TE's fused RoPE").
  bool unfused_rope() const { return megatron_core_modules && yarn_rope_factor > 1; }
  // The layers run Megatron-Core's modules (set from the training stack,
  // scenarios/input/resolve.cc): the GLU variants' eager clamp and host sync,
  // the grouped experts' eager fc2 bias and the unfused YaRN RoPE above are
  // how Megatron-Core implements them; other stacks are not costed for them.
  bool megatron_core_modules = false;
  // Hybrid model, Megatron-Core's hybrid_override_pattern (HF NemotronH the
  // same): one character per layer, 'M' a Mamba-2 mixer, '*' self-attention,
  // '-' a dense MLP of ffn_hidden_size (megatron/core/ssm/
  // mamba_hybrid_layer_allocation.py Symbols, NVIDIA/Megatron-LM @
  // 23ba31095d), 'E' a mixture-of-experts MLP (Megatron-Bridge's Nemotron 3
  // Nano recipe, recipes/nemotronh/h100/nemotron_3_nano.py @ 067f987df0).
  // Empty: every layer is a transformer layer.
  std::string hybrid_pattern;
  // The Mamba-2 mixer (megatron/core/ssm/mamba_mixer.py MambaMixer; Dao & Gu
  // 2024, arXiv 2405.21060): mamba_num_heads heads of mamba_head_dim channels
  // (d_inner = heads x head_dim), mamba_num_groups groups of B and C of
  // mamba_state_dim each, a depthwise causal conv1d of mamba_conv_kernel taps
  // over x, B and C, and the SSD scan in chunks of mamba_chunk_size tokens.
  // Used only by 'M' layers.
  int mamba_num_heads = 0, mamba_head_dim = 64, mamba_state_dim = 128, mamba_num_groups = 8;
  int mamba_conv_kernel = 4, mamba_chunk_size = 128;

  bool hybrid() const { return !hybrid_pattern.empty(); }
  // The layer's blocks: kTransformer for every layer of a non-hybrid model,
  // else the pattern's character. The one place that decides it (with
  // IsMoeLayer for a transformer layer's MLP): parameters, FLOPs, memory, the
  // step's layer ops and serving all ask here.
  LayerKind Kind(int layer) const {
    if (!hybrid()) return LayerKind::kTransformer;
    switch (hybrid_pattern[layer]) {
      case 'M': return LayerKind::kMamba;
      case '*': return LayerKind::kAttention;
      case '-': return LayerKind::kMlp;
      default: return LayerKind::kMoe;
    }
  }
  // Layers of kind `k`.
  int num_layers_of(LayerKind k) const {
    int n = 0;
    for (int l = 0; l < num_layers; ++l) n += Kind(l) == k ? 1 : 0;
    return n;
  }
  // Layers with self-attention (and a KV cache): all but a hybrid model's
  // Mamba and MLP layers.
  int num_attention_layers() const {
    return hybrid() ? num_layers_of(LayerKind::kAttention) : num_layers;
  }
  int mamba_d_inner() const { return mamba_num_heads * mamba_head_dim; }
  // The mixer's conv1d channels: x, B and C.
  int mamba_conv_dim() const { return mamba_d_inner() + 2 * mamba_num_groups * mamba_state_dim; }
  // in_proj's output width: z, x, B, C and dt (one per head).
  int mamba_in_proj_width() const {
    return 2 * mamba_d_inner() + 2 * mamba_num_groups * mamba_state_dim + mamba_num_heads;
  }

  bool mla() const { return kv_lora_rank > 0; }
  // Query/key head dimension: nope + rope under MLA, else kv_channels or h/a.
  int head_dim() const {
    if (mla()) return qk_nope_head_dim + qk_rope_head_dim;
    return kv_channels > 0 ? kv_channels : hidden_size / num_attention_heads;
  }
  // Value (and attention output) head dimension.
  int value_head_dim() const { return mla() ? v_head_dim : head_dim(); }
  int expert_ffn_size() const {
    return moe_ffn_hidden_size > 0 ? moe_ffn_hidden_size : ffn_hidden_size;
  }
  // Whether layer `layer` (0 .. num_layers - 1) has a mixture-of-experts MLP:
  // never for a dense model; else not the dense-first layers, and with
  // moe_layer_step > 1 only every moe_layer_step-th layer. The one place that
  // decides it: parameters, FLOPs, memory, the step's layer ops and serving
  // all ask here.
  bool IsMoeLayer(int layer) const {
    if (hybrid()) return Kind(layer) == LayerKind::kMoe;
    if (num_experts <= 0 || layer < moe_first_dense_layers) return false;
    return moe_layer_step <= 1 || (layer + 1) % moe_layer_step == 0;
  }
  // Layers with a mixture-of-experts MLP (0 for a dense model).
  int num_moe_layers() const {
    int n = 0;
    for (int l = 0; l < num_layers; ++l) n += IsMoeLayer(l) ? 1 : 0;
    return n;
  }
  // Layers with a dense MLP of ffn_hidden_size (a hybrid model's MLP layers).
  int num_dense_layers() const {
    return hybrid() ? num_layers_of(LayerKind::kMlp) : num_layers - num_moe_layers();
  }
};

// OK, or InvalidArgument naming the first bad field and a fix, e.g.
// "model.num_attention_heads=40 is not divisible by model.num_query_groups=16".
absl::Status ValidateTransformer(const TransformerConfig& c);

// The shipped presets. Immutable; thread-safe.
class ModelCatalog {
 public:
  // Parsed once from the embedded data file; aborts if it is invalid (a build bug).
  static const ModelCatalog& Default();
  // Parses and validates a ModelCatalogFile in protobuf text format.
  static absl::StatusOr<ModelCatalog> Parse(std::string_view textproto);

  // NotFound listing the preset names when `name` is unknown.
  absl::StatusOr<TransformerConfig> Find(std::string_view name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  std::vector<TransformerConfig> models_;  // sorted by name
};

// Parameter counts (Megatron-LM theoretical_memory_usage.py accounting, plus
// biases): per_layer = attention 2·h·d·(a+g) + MLP (3·h·f gated, else 2·h·f;
// × experts, + router h·E for MoE) + norms (4h LayerNorm, 2h RMSNorm)
// + biases ((a+2g)·d + h + f·(2 gated, else 1) + h) when add_bias_linear.
// MoE layers use the expert FFN size for the E routed experts and add the
// shared experts' MLP (3·h·f_shared gated); dense layers of an MoE model
// (dense-first or interleaved, TransformerConfig::IsMoeLayer) have the dense
// MLP and no router. MLA replaces QKV by h·q_lora + q_lora·a·(nope + rope)
// (or h·a·(nope + rope) without q_lora) + h·(kv_lora + rope)
// + kv_lora·a·(nope + v), the output projection by a·v·h, and adds the
// q_lora and kv_lora RMSNorms. With dense layers in an MoE model the
// per-layer figures are means over all layers, so Total() is exact.
struct ParameterCounts {
  double embedding = 0;   // V·h word embeddings + s·h learned positions
  double per_layer = 0;   // one transformer layer (mean over layers)
  double final_norm = 0;  // h (RMSNorm) or 2h (LayerNorm)
  double lm_head = 0;     // V·h, 0 if tied
  // Parts of per_layer: the routed experts' weights and biases (E·MLP; 0 for
  // dense models), and the weight matrices of the linear layers (attention
  // QKV/output and the MLP or all experts; no biases, norms or router).
  double expert_per_layer = 0;
  double linear_per_layer = 0;
  double Total(int num_layers) const {
    return embedding + per_layer * num_layers + final_norm + lm_head;
  }
};
// REQUIRES: ValidateTransformer(c).ok().
ParameterCounts CountParameters(const TransformerConfig& c);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_TRANSFORMER_CONFIG_H_
