// File: models/hf_config.h
//
// Imports a Hugging Face transformers `config.json` (Llama, Llama 4, Mistral,
// Mixtral, Qwen2/3 and their MoE variants, DeepSeek-V2/V3, gpt-oss, Nemotron,
// NemotronH and other decoder-only configs that use the Llama field names) as a
// TransformerConfig. A multimodal config whose top level has no hidden_size
// (Llama 4's Llama4ForConditionalGeneration) is read from its "text_config",
// with the top level's other fields (tie_word_embeddings, _name_or_path). JSON is parsed with
// protobuf's JSON → Struct parser; no other JSON library.
//
// Field mapping (HF → TransformerConfig):
//   hidden_size → hidden_size; num_hidden_layers → num_layers;
//   num_attention_heads → num_attention_heads;
//   num_key_value_heads → num_query_groups (absent: = heads, i.e. MHA);
//   intermediate_size → ffn_hidden_size (the per-expert size for MoE);
//   vocab_size → vocab_size (used as is: pad it to a multiple of 128·tp
//     yourself if tensor parallelism needs it);
//   seq_length if present, else max_position_embeddings → seq_length (the
//     context limit, e.g. 32768 for Mixtral: override model.seq_length for
//     the training length);
//   hidden_act: gated families (model_type llama*, mistral, mixtral, qwen2,
//     or an architectures entry Llama*/Mistral*/Mixtral*/Qwen2*) with "silu"
//     → SwiGLU; "gelu*" / "relu" → non-gated GeLU-shaped MLP; "relu2" →
//     squared ReLU (Nemotron);
//   rms_norm_eps present → RMSNorm, else LayerNorm;
//   tie_word_embeddings (absent: true, the transformers default);
//   attention_bias || mlp_bias → add_bias_linear (absent: false);
//   num_local_experts (Mixtral, gpt-oss) | num_experts (Qwen2/3-MoE) |
//     n_routed_experts (DeepSeek), and num_experts_per_tok → num_experts /
//     moe_top_k;
//   head_dim → kv_channels when it differs from hidden_size /
//     num_attention_heads (Qwen3 128, gpt-oss 64);
//   moe_intermediate_size → moe_ffn_hidden_size (intermediate_size stays the
//     dense layers' size); n_shared_experts x moe_intermediate_size (DeepSeek)
//     or shared_expert_intermediate_size (Qwen2-MoE) →
//     moe_shared_expert_ffn_size; first_k_dense_replace →
//     moe_first_dense_layers; interleave_moe_layer_step (Llama 4) or
//     decoder_sparse_step (Qwen-MoE) → moe_layer_step (layer i MoE when
//     (i + 1) % step == 0; an explicit Llama 4 moe_layers list must be that
//     pattern); Qwen-MoE's non-empty mlp_only_layers is refused;
//   Llama 4 (model_type llama4*): intermediate_size → the routed experts' and
//     the one shared expert's FFN size, intermediate_size_mlp →
//     ffn_hidden_size (the dense layers');
//   kv_lora_rank, q_lora_rank (null: none), qk_nope_head_dim,
//     qk_rope_head_dim, v_head_dim → multi-head latent attention (DeepSeek);
//   swiglu_limit → glu_clamp; model_type gpt_oss → quick_gelu_glu (gate
//     x·sigmoid(1.702·x), +1 on the linear half); rope_scaling with
//     rope_type (or type) "yarn" → yarn_rope_factor = its factor.
//   NemotronH (model_type nemotron_h: Nemotron-H, Nemotron 3 Nano):
//     hybrid_override_pattern → hybrid_pattern; mamba_num_heads,
//     mamba_head_dim, ssm_state_size, n_groups, conv_kernel, chunk_size →
//     the Mamba-2 mixer; mlp_hidden_act → the activation; RMSNorm;
//     moe_shared_expert_intermediate_size → moe_shared_expert_ffn_size.
// Gated (SwiGLU) families also include qwen2_moe, qwen3, qwen3_moe,
// deepseek_v2/v3 and gpt_oss.
//   sliding_window (null, absent or use_sliding_window false: none) →
//     sliding_window, on the layers that layer_types marks
//     "sliding_attention" (gpt-oss: 18 of 36), else all but every
//     sliding_window_pattern-th layer (Gemma 3), else the even layers
//     (gemma2), else every layer (Mistral 7B v0.1) → sliding_window_layers.
//   quantization_config → fp8_weight_block (quant_method "fp8" with
//     weight_block_size); the serving weight format it states (quant_method
//     "fbgemm_fp8") is read by models/hf_quantization.h.
// Not modelled, and ignored: gpt-oss's attention sinks (the per-head softmax
// offsets),
// Qwen3's per-head q/k RMSNorms (2·head_dim weights per layer), DeepSeek-V3's
// multi-token-prediction module (num_nextn_predict_layers) and its router's
// expert bias, and Llama 4's chunked attention (attention_chunk_size 8192 on
// three of four layers: costed as full causal attention, exact up to 8192
// tokens and an overestimate beyond; set model.seq_length to the training
// length, since max_position_embeddings is 1M) and its q/k L2 norms.
// Positions are rotary (no learned table) except for model_type "gpt2",
// which is rejected (it uses n_embd/n_layer names; use a preset).
// The name is `_name_or_path` if present, else "hf:" + origin.
//
// Example:
//   absl::StatusOr<models::TransformerConfig> m =
//       models::LoadHfConfigFile("models/testdata/Meta-Llama-3-8B.config.json");
//   if (!m.ok()) return m.status();  // names the field: "…: \"num_attention_heads\"=32 is not
//                                     // divisible by \"num_key_value_heads\"=5; …"
#ifndef CLUSTERSIM_MODELS_HF_CONFIG_H_
#define CLUSTERSIM_MODELS_HF_CONFIG_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "models/transformer_config.h"

namespace clustersim::models {

// Parses the text of a config.json. `origin` (a path or label) prefixes every
// error message. InvalidArgument names the missing or inconsistent field:
// not a JSON object, a required field missing, a size that is not a positive
// integer, heads not divisible by KV heads, hidden size not divisible by
// heads, an unknown hidden_act, top-k above the expert count. The result
// passes ValidateTransformer.
absl::StatusOr<TransformerConfig> ParseHfConfig(std::string_view json, std::string_view origin);

// Reads `path` (relative paths resolve against the current working directory)
// and parses it. NotFound if the file cannot be read.
absl::StatusOr<TransformerConfig> LoadHfConfigFile(const std::string& path);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_HF_CONFIG_H_
