#include "scenarios/input/resolve_model.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/hf_config.h"

namespace clustersim::scenarios {
namespace {

absl::Status WithField(const absl::Status& s, std::string_view field) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(std::string(field), ": ", s.message()));
}

}  // namespace

absl::Status ResolveModel(const config::ModelConfig& in, models::TransformerConfig* out) {
  if (in.has_preset() && in.has_model_config_file()) {
    return absl::InvalidArgumentError(
        "model.preset and model.model_config_file are both set; keep one");
  }
  const bool has_base = in.has_preset() || in.has_model_config_file();
  if (in.has_model_config_file()) {
    absl::StatusOr<models::TransformerConfig> file =
        models::LoadHfConfigFile(in.model_config_file());
    if (!file.ok()) return WithField(file.status(), "model.model_config_file");
    *out = *file;
  } else if (in.has_preset()) {
    absl::StatusOr<models::TransformerConfig> preset =
        models::ModelCatalog::Default().Find(in.preset());
    if (!preset.ok()) return WithField(preset.status(), "model.preset");
    *out = *preset;
  } else {
    out->name = "custom";
    for (auto [has, field] : {std::pair{in.has_num_layers(), "num_layers"},
                              std::pair{in.has_hidden_size(), "hidden_size"},
                              std::pair{in.has_num_attention_heads(), "num_attention_heads"},
                              std::pair{in.has_seq_length(), "seq_length"},
                              std::pair{in.has_vocab_size(), "vocab_size"}}) {
      if (!has) {
        return absl::InvalidArgumentError(
            absl::StrCat("model.", field,
                         " is required without model.preset or model.model_config_file; set it, "
                         "or name a preset (`clustersim list models`)"));
      }
    }
  }
  // Restating a preset's own hidden size or head count changes nothing; a new
  // value re-derives what depends on it (the FFN width, the query groups)
  // unless that is stated too.
  const bool new_hidden =
      in.has_hidden_size() && (!has_base || in.hidden_size() != out->hidden_size);
  const bool new_heads = in.has_num_attention_heads() &&
                         (!has_base || in.num_attention_heads() != out->num_attention_heads);
  if (in.has_num_layers()) out->num_layers = in.num_layers();
  if (in.has_hidden_size()) out->hidden_size = in.hidden_size();
  if (in.has_num_attention_heads()) out->num_attention_heads = in.num_attention_heads();
  if (in.has_seq_length()) out->seq_length = in.seq_length();
  if (in.has_vocab_size()) out->vocab_size = in.vocab_size();
  if (in.has_swiglu()) {
    out->activation = in.swiglu() ? models::Activation::kSwiglu : models::Activation::kGelu;
  }
  if (in.has_ffn_hidden_size()) {
    out->ffn_hidden_size = in.ffn_hidden_size();
  } else if (!has_base || new_hidden) {
    const int64_t ffn = int64_t{4} * out->hidden_size;  // int64: no signed overflow
    if (ffn > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model.hidden_size=", out->hidden_size,
                       " is too large: its default ffn_hidden_size (4x) ", ffn,
                       " exceeds 2^31 - 1; use a hidden size below 536870912"));
    }
    out->ffn_hidden_size = static_cast<int>(ffn);
  }
  if (in.has_num_query_groups()) {
    out->num_query_groups = in.num_query_groups();
  } else if (!has_base || new_heads) {
    out->num_query_groups = out->num_attention_heads;
  }
  if (in.has_norm()) {
    if (in.norm() == "layernorm") {
      out->norm = models::Norm::kLayerNorm;
    } else if (in.norm() == "rmsnorm") {
      out->norm = models::Norm::kRmsNorm;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("model.norm=\"", in.norm(), "\" is not known; use layernorm or rmsnorm"));
    }
  }
  if (in.has_tied_embeddings()) out->tied_embeddings = in.tied_embeddings();
  if (in.has_num_experts()) out->num_experts = in.num_experts();
  if (in.has_moe_top_k()) out->moe_top_k = in.moe_top_k();
  if (in.has_moe_capacity_factor()) out->moe_capacity_factor = in.moe_capacity_factor();
  if (in.has_head_dim()) out->kv_channels = in.head_dim();
  if (in.has_moe_ffn_hidden_size()) out->moe_ffn_hidden_size = in.moe_ffn_hidden_size();
  if (in.has_moe_shared_expert_ffn_size()) {
    out->moe_shared_expert_ffn_size = in.moe_shared_expert_ffn_size();
  }
  if (in.has_moe_first_dense_layers()) out->moe_first_dense_layers = in.moe_first_dense_layers();
  if (in.has_moe_layer_step()) out->moe_layer_step = in.moe_layer_step();
  if (in.has_q_lora_rank()) out->q_lora_rank = in.q_lora_rank();
  if (in.has_kv_lora_rank()) out->kv_lora_rank = in.kv_lora_rank();
  if (in.has_qk_nope_head_dim()) out->qk_nope_head_dim = in.qk_nope_head_dim();
  if (in.has_qk_rope_head_dim()) out->qk_rope_head_dim = in.qk_rope_head_dim();
  if (in.has_v_head_dim()) out->v_head_dim = in.v_head_dim();
  if (in.has_mtp_num_layers()) out->mtp_num_layers = in.mtp_num_layers();
  if (in.has_moe_expert_load_cv()) out->moe_expert_load_cv = in.moe_expert_load_cv();
  if (in.has_fp8_weight_block()) out->fp8_weight_block = in.fp8_weight_block();
  if (in.has_glu_clamp()) out->glu_clamp = in.glu_clamp();
  if (in.has_quick_gelu_glu()) out->quick_gelu_glu = in.quick_gelu_glu();
  if (in.has_yarn_rope_factor()) out->yarn_rope_factor = in.yarn_rope_factor();
  if (in.has_sliding_window()) out->sliding_window = in.sliding_window();
  // Turning a preset's window off clears its layer count too.
  if (in.has_sliding_window() && in.sliding_window() == 0) out->sliding_window_layers = 0;
  if (in.has_sliding_window_layers()) out->sliding_window_layers = in.sliding_window_layers();
  if (in.has_hybrid_override_pattern()) out->hybrid_pattern = in.hybrid_override_pattern();
  if (in.has_mamba_num_heads()) out->mamba_num_heads = in.mamba_num_heads();
  if (in.has_mamba_head_dim()) out->mamba_head_dim = in.mamba_head_dim();
  if (in.has_mamba_state_dim()) out->mamba_state_dim = in.mamba_state_dim();
  if (in.has_mamba_num_groups()) out->mamba_num_groups = in.mamba_num_groups();
  if (in.has_mamba_conv_kernel()) out->mamba_conv_kernel = in.mamba_conv_kernel();
  if (in.has_mamba_chunk_size()) out->mamba_chunk_size = in.mamba_chunk_size();
  return models::ValidateTransformer(*out);
}

void EchoModel(const models::TransformerConfig& m, config::ModelConfig* out) {
  out->set_num_layers(m.num_layers);
  out->set_hidden_size(m.hidden_size);
  out->set_ffn_hidden_size(m.ffn_hidden_size);
  out->set_num_attention_heads(m.num_attention_heads);
  out->set_num_query_groups(m.num_query_groups);
  out->set_seq_length(m.seq_length);
  out->set_vocab_size(m.vocab_size);
  out->set_swiglu(m.activation == models::Activation::kSwiglu);
  out->set_norm(m.norm == models::Norm::kRmsNorm ? "rmsnorm" : "layernorm");
  out->set_tied_embeddings(m.tied_embeddings);
  out->set_num_experts(m.num_experts);
  out->set_moe_top_k(m.moe_top_k);
  if (m.num_experts > 0) out->set_moe_capacity_factor(m.moe_capacity_factor);
  // Echoed only when set, so that plain transformers echo what they did.
  if (m.kv_channels > 0) out->set_head_dim(m.kv_channels);
  if (m.moe_ffn_hidden_size > 0) out->set_moe_ffn_hidden_size(m.moe_ffn_hidden_size);
  if (m.moe_shared_expert_ffn_size > 0) {
    out->set_moe_shared_expert_ffn_size(m.moe_shared_expert_ffn_size);
  }
  if (m.moe_first_dense_layers > 0) out->set_moe_first_dense_layers(m.moe_first_dense_layers);
  if (m.moe_layer_step > 1) out->set_moe_layer_step(m.moe_layer_step);
  if (m.mtp_num_layers > 0) out->set_mtp_num_layers(m.mtp_num_layers);
  if (m.moe_expert_load_cv > 0) out->set_moe_expert_load_cv(m.moe_expert_load_cv);
  if (m.fp8_weight_block > 0) out->set_fp8_weight_block(m.fp8_weight_block);
  if (m.glu_clamp > 0) out->set_glu_clamp(m.glu_clamp);
  if (m.quick_gelu_glu) out->set_quick_gelu_glu(true);
  if (m.yarn_rope_factor > 0) out->set_yarn_rope_factor(m.yarn_rope_factor);
  if (m.sliding_window > 0) {
    out->set_sliding_window(static_cast<int32_t>(m.sliding_window));
    out->set_sliding_window_layers(m.sliding_window_layers);
  }
  if (m.hybrid()) {
    out->set_hybrid_override_pattern(m.hybrid_pattern);
    out->set_mamba_num_heads(m.mamba_num_heads);
    out->set_mamba_head_dim(m.mamba_head_dim);
    out->set_mamba_state_dim(m.mamba_state_dim);
    out->set_mamba_num_groups(m.mamba_num_groups);
    out->set_mamba_conv_kernel(m.mamba_conv_kernel);
    out->set_mamba_chunk_size(m.mamba_chunk_size);
  }
  if (m.mla()) {
    out->set_q_lora_rank(m.q_lora_rank);
    out->set_kv_lora_rank(m.kv_lora_rank);
    out->set_qk_nope_head_dim(m.qk_nope_head_dim);
    out->set_qk_rope_head_dim(m.qk_rope_head_dim);
    out->set_v_head_dim(m.v_head_dim);
  }
}

}  // namespace clustersim::scenarios
