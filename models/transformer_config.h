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

struct TransformerConfig {
  std::string name;
  int num_layers = 0, hidden_size = 0, ffn_hidden_size = 0, num_attention_heads = 0;
  int num_query_groups = 0;             // == heads for MHA
  int seq_length = 0, vocab_size = 0;   // vocab_size = padded vocab
  Activation activation = Activation::kGelu;
  Norm norm = Norm::kLayerNorm;
  bool tied_embeddings = true;          // GPT-style shares input embedding and LM head
  bool learned_position_embeddings = true;  // GPT: an s x h table; false for RoPE/ALiBi
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
  int head_dim() const { return hidden_size / num_attention_heads; }
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
struct ParameterCounts {
  double embedding = 0;   // V·h word embeddings + s·h learned positions
  double per_layer = 0;   // one transformer layer
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
