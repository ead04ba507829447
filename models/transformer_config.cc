#include "models/transformer_config.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "models/hybrid_layers.h"
#include "models/proto/catalog.pb.h"
#include "sim/check.h"
#include "sim/status_macros.h"

namespace clustersim::embedded {
std::string_view ModelCatalogData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

absl::Status Positive(absl::string_view field, int value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("model.", field, " must be > 0 (got ", value, ")"));
}

absl::StatusOr<TransformerConfig> FromProto(const config::ModelPreset& p) {
  TransformerConfig c;
  c.name = p.name();
  c.num_layers = p.num_layers();
  c.hidden_size = p.hidden_size();
  c.ffn_hidden_size = p.ffn_hidden_size();
  c.num_attention_heads = p.num_attention_heads();
  c.num_query_groups = p.num_query_groups() == 0 ? p.num_attention_heads() : p.num_query_groups();
  c.seq_length = p.seq_length();
  c.vocab_size = p.padded_vocab_size();
  if (p.activation() == "gelu") {
    c.activation = Activation::kGelu;
  } else if (p.activation() == "swiglu") {
    c.activation = Activation::kSwiglu;
  } else if (p.activation() == "squared-relu") {
    c.activation = Activation::kSquaredRelu;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("model '", p.name(), "': activation '",
                                                   p.activation(),
                                                   "' is not gelu, swiglu or squared-relu"));
  }
  if (p.norm() == "layernorm") {
    c.norm = Norm::kLayerNorm;
  } else if (p.norm() == "rmsnorm") {
    c.norm = Norm::kRmsNorm;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", p.name(), "': norm '", p.norm(), "' is not layernorm or rmsnorm"));
  }
  c.tied_embeddings = !p.untie_embeddings_and_output_weights();
  c.learned_position_embeddings = p.learned_position_embeddings();
  c.alibi = p.alibi();
  c.add_bias_linear = p.add_bias_linear();
  c.num_experts = p.num_experts();
  c.moe_top_k = p.moe_top_k();
  if (p.moe_capacity_factor() != 0) c.moe_capacity_factor = p.moe_capacity_factor();
  c.kv_channels = p.kv_channels();
  c.moe_ffn_hidden_size = p.moe_ffn_hidden_size();
  c.moe_shared_expert_ffn_size = p.moe_shared_expert_ffn_size();
  c.moe_first_dense_layers = p.moe_first_dense_layers();
  c.moe_layer_step = p.moe_layer_step();
  c.moe_expert_load_cv = p.moe_expert_load_cv();
  c.fp8_weight_block = p.fp8_weight_block();
  c.q_lora_rank = p.q_lora_rank();
  c.kv_lora_rank = p.kv_lora_rank();
  c.qk_nope_head_dim = p.qk_nope_head_dim();
  c.qk_rope_head_dim = p.qk_rope_head_dim();
  c.v_head_dim = p.v_head_dim();
  c.glu_clamp = p.glu_clamp();
  c.quick_gelu_glu = p.quick_gelu_glu();
  c.yarn_rope_factor = p.yarn_rope_factor();
  c.sliding_window = p.sliding_window();
  c.sliding_window_layers = p.sliding_window_layers();
  c.hybrid_pattern = p.hybrid_override_pattern();
  if (p.mamba_head_dim() > 0) c.mamba_head_dim = p.mamba_head_dim();
  c.mamba_num_heads = p.mamba_num_heads() > 0 ? p.mamba_num_heads()
                                              : 2 * c.hidden_size / c.mamba_head_dim;
  if (p.mamba_state_dim() > 0) c.mamba_state_dim = p.mamba_state_dim();
  if (p.mamba_num_groups() > 0) c.mamba_num_groups = p.mamba_num_groups();
  if (p.mamba_conv_kernel() > 0) c.mamba_conv_kernel = p.mamba_conv_kernel();
  if (p.mamba_chunk_size() > 0) c.mamba_chunk_size = p.mamba_chunk_size();
  if (c.name.empty()) return absl::InvalidArgumentError("model preset without a name");
  if (p.source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("model '", c.name, "': source must be set"));
  }
  if (absl::Status s = ValidateTransformer(c); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("model '", c.name, "': ", s.message()));
  }
  return c;
}

absl::Status NonNegative(absl::string_view field, int value) {
  if (value >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("model.", field, " must be >= 0 (got ", value, "); 0 leaves it unset"));
}

// Head dimension, expert sizes, dense-first layers and latent attention.
absl::Status ValidateArchitectureExtensions(const TransformerConfig& c) {
  for (auto [field, value] : {std::pair<absl::string_view, int>{"head_dim", c.kv_channels},
                              {"moe_ffn_hidden_size", c.moe_ffn_hidden_size},
                              {"moe_shared_expert_ffn_size", c.moe_shared_expert_ffn_size},
                              {"moe_first_dense_layers", c.moe_first_dense_layers},
                              {"moe_layer_step", c.moe_layer_step},
                              {"q_lora_rank", c.q_lora_rank},
                              {"kv_lora_rank", c.kv_lora_rank},
                              {"qk_nope_head_dim", c.qk_nope_head_dim},
                              {"qk_rope_head_dim", c.qk_rope_head_dim},
                              {"v_head_dim", c.v_head_dim},
                              {"mtp_num_layers", c.mtp_num_layers}}) {
    CLUSTERSIM_RETURN_IF_ERROR(NonNegative(field, value));
  }
  if (c.mtp_num_layers > c.num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.mtp_num_layers=", c.mtp_num_layers, " exceeds model.num_layers=", c.num_layers,
        "; DeepSeek-V3 trains 1"));
  }
  if (c.num_experts == 0) {
    for (auto [field, value] :
         {std::pair<absl::string_view, int>{"moe_ffn_hidden_size", c.moe_ffn_hidden_size},
          {"moe_shared_expert_ffn_size", c.moe_shared_expert_ffn_size},
          {"moe_first_dense_layers", c.moe_first_dense_layers},
          {"moe_layer_step", c.moe_layer_step > 1 ? c.moe_layer_step : 0}}) {
      if (value != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("model.", field, "=", value,
                         " needs a mixture-of-experts model (model.num_experts > 0); set it to 0 "
                         "for a dense model"));
      }
    }
  }
  if (c.moe_first_dense_layers >= c.num_layers && c.num_experts > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.moe_first_dense_layers=", c.moe_first_dense_layers,
        " must be below model.num_layers=", c.num_layers, " so that some layer has experts"));
  }
  if (c.num_experts > 0 && c.num_moe_layers() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.moe_layer_step=", c.moe_layer_step, " leaves no layer with experts (layer i has "
        "them when (i + 1) % step == 0, from model.moe_first_dense_layers=",
        c.moe_first_dense_layers, " on, of model.num_layers=", c.num_layers,
        "); use a smaller step (Llama 4 Maverick: 2)"));
  }
  const bool any_mla =
      c.q_lora_rank > 0 || c.qk_nope_head_dim > 0 || c.qk_rope_head_dim > 0 || c.v_head_dim > 0;
  if (!c.mla()) {
    if (any_mla) {
      return absl::InvalidArgumentError(
          "model.q_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim describe "
          "multi-head latent attention and need model.kv_lora_rank > 0; set kv_lora_rank or "
          "clear them");
    }
    return absl::OkStatus();
  }
  for (auto [field, value] :
       {std::pair<absl::string_view, int>{"qk_nope_head_dim", c.qk_nope_head_dim},
        {"qk_rope_head_dim", c.qk_rope_head_dim},
        {"v_head_dim", c.v_head_dim}}) {
    if (value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("model.", field, " must be > 0 with latent attention (model.kv_lora_rank=",
                       c.kv_lora_rank, "); DeepSeek-V3 uses qk_nope 128, qk_rope 64, v 128"));
    }
  }
  if (c.kv_channels != 0) {
    return absl::InvalidArgumentError(
        "model.head_dim is set together with model.kv_lora_rank; latent attention takes its "
        "head sizes from qk_nope_head_dim, qk_rope_head_dim and v_head_dim: clear head_dim");
  }
  if (c.num_query_groups != c.num_attention_heads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.num_query_groups=", c.num_query_groups,
        " with latent attention must equal "
        "model.num_attention_heads=",
        c.num_attention_heads,
        " (every head has its own key and value, up-projected from the shared latent)"));
  }
  if (c.add_bias_linear) {
    return absl::InvalidArgumentError(
        "model.kv_lora_rank > 0 with linear biases is not modelled; latent attention models "
        "(DeepSeek-V2/V3) have none: turn biases off");
  }
  return absl::OkStatus();
}

// The gated-activation variants, the YaRN factor and the sliding window.
absl::Status ValidateGluAndRope(const TransformerConfig& c) {
  if (!(c.glu_clamp >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.glu_clamp must be >= 0 (got ", c.glu_clamp, "); gpt-oss clamps at 7, 0 = none"));
  }
  if ((c.glu_clamp > 0 || c.quick_gelu_glu) && c.activation != Activation::kSwiglu) {
    return absl::InvalidArgumentError(
        "model.glu_clamp and model.quick_gelu_glu modify a gated (GLU) activation: set "
        "model.swiglu (preset activation \"swiglu\") or clear them");
  }
  if (!(c.yarn_rope_factor == 0 || c.yarn_rope_factor >= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.yarn_rope_factor must be 0 (plain RoPE) or >= 1 (got ", c.yarn_rope_factor,
        "); gpt-oss uses 32"));
  }
  if (c.sliding_window < 0 || (c.sliding_window == 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.sliding_window must be 0 (none) or >= 2 keys (got ", c.sliding_window,
        "); gpt-oss uses 128"));
  }
  if (c.sliding_window > 0 &&
      (c.sliding_window_layers < 1 || c.sliding_window_layers > c.num_attention_layers())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.sliding_window_layers must be between 1 and the ", c.num_attention_layers(),
        " attention layers when model.sliding_window is set (got ", c.sliding_window_layers,
        ")"));
  }
  if (c.sliding_window == 0 && c.sliding_window_layers != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.sliding_window_layers=", c.sliding_window_layers,
        " needs model.sliding_window (the window in tokens)"));
  }
  if (c.alibi && c.learned_position_embeddings) {
    return absl::InvalidArgumentError(
        "model.alibi biases the attention scores in place of positions; the model has a "
        "learned position table: clear alibi or turn learned_position_embeddings off");
  }
  if (c.yarn_rope_factor > 0 && c.learned_position_embeddings) {
    return absl::InvalidArgumentError(
        "model.yarn_rope_factor scales rotary embeddings; the model has a learned position "
        "table: clear yarn_rope_factor or turn learned_position_embeddings off");
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view AttentionBackendName(AttentionBackend b) {
  return b == AttentionBackend::kUnfused ? "unfused" : "flash";
}

absl::StatusOr<AttentionBackend> ParseAttentionBackend(std::string_view name) {
  if (name == "flash") return AttentionBackend::kFlash;
  if (name == "unfused") return AttentionBackend::kUnfused;
  return absl::InvalidArgumentError(absl::StrCat(
      "training.attention=\"", std::string(name),
      "\" is not known; use flash (fused FlashAttention kernel) or unfused (Megatron's "
      "pre-FlashAttention batched GEMMs + softmax + dropout)"));
}

std::string_view ElementwiseKernelsName(ElementwiseKernels e) {
  return e == ElementwiseKernels::kEager ? "eager" : "fused";
}

absl::StatusOr<ElementwiseKernels> ParseElementwiseKernels(std::string_view name,
                                                           std::string_view field) {
  if (name == "fused") return ElementwiseKernels::kFused;
  if (name == "eager") return ElementwiseKernels::kEager;
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(field), "=\"", std::string(name),
      "\" is not known; use fused (one kernel per norm, RoPE and activation: Megatron, XLA, "
      "torch.compile) or eager (eager PyTorch's composite elementwise ops)"));
}

absl::Status ValidateTransformer(const TransformerConfig& c) {
  for (auto [field, value] : {std::pair<absl::string_view, int>{"num_layers", c.num_layers},
                              {"hidden_size", c.hidden_size},
                              {"ffn_hidden_size", c.ffn_hidden_size},
                              {"num_attention_heads", c.num_attention_heads},
                              {"seq_length", c.seq_length},
                              {"vocab_size", c.vocab_size}}) {
    CLUSTERSIM_RETURN_IF_ERROR(Positive(field, value));
  }
  if (c.num_query_groups <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.num_query_groups must be > 0 (got ", c.num_query_groups,
        "); set it to num_attention_heads=", c.num_attention_heads, " for multi-head attention"));
  }
  CLUSTERSIM_RETURN_IF_ERROR(ValidateHybrid(c));  // first: the others read the pattern
  CLUSTERSIM_RETURN_IF_ERROR(ValidateArchitectureExtensions(c));
  CLUSTERSIM_RETURN_IF_ERROR(ValidateGluAndRope(c));
  if (c.kv_channels == 0 && !c.mla() && c.hidden_size % c.num_attention_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.hidden_size=", c.hidden_size,
                     " is not divisible by model.num_attention_heads=", c.num_attention_heads,
                     "; the head dimension must be a whole number (or set "
                     "model.head_dim)"));
  }
  if (c.num_attention_heads % c.num_query_groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.num_attention_heads=", c.num_attention_heads,
        " is not divisible by model.num_query_groups=", c.num_query_groups,
        "; each query group must hold the same number of heads"));
  }
  if (c.num_experts < 0 || c.moe_top_k < 0) {
    return absl::InvalidArgumentError("model.num_experts and model.moe_top_k must be >= 0");
  }
  if (c.num_experts == 0 && c.moe_top_k != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.moe_top_k=", c.moe_top_k, " needs model.num_experts > 0 (0 means dense)"));
  }
  if (c.num_experts > 0 && (c.moe_top_k < 1 || c.moe_top_k > c.num_experts)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.moe_top_k=", c.moe_top_k, " must be in [1, model.num_experts=",
                     c.num_experts, "]"));
  }
  if (!(c.moe_expert_load_cv >= 0 && c.moe_expert_load_cv <= 100)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.moe_expert_load_cv must be in [0, 100] (got ", c.moe_expert_load_cv,
        "); it is the std / mean of the rows each expert receives, 0 for uniform routing"));
  }
  if (c.fp8_weight_block < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.fp8_weight_block must be >= 0 (got ", c.fp8_weight_block,
        "); it is the FP8 checkpoint's weight block (128 for DeepSeek-V3/R1), 0 for per-tensor"));
  }
  if (!(c.moe_capacity_factor > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.moe_capacity_factor must be > 0 (got ", c.moe_capacity_factor,
        "); 1.0 means every expert gets exactly its balanced share of tokens"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelCatalog> ModelCatalog::Parse(std::string_view textproto) {
  config::ModelCatalogFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError("model catalog: not a valid ModelCatalogFile text proto");
  }
  ModelCatalog catalog;
  for (const config::ModelPreset& p : file.model()) {
    absl::StatusOr<TransformerConfig> c = FromProto(p);
    if (!c.ok()) return c.status();
    catalog.models_.push_back(*std::move(c));
  }
  std::sort(catalog.models_.begin(), catalog.models_.end(),
            [](const TransformerConfig& a, const TransformerConfig& b) { return a.name < b.name; });
  for (size_t i = 1; i < catalog.models_.size(); ++i) {
    if (catalog.models_[i].name == catalog.models_[i - 1].name) {
      return absl::InvalidArgumentError(
          absl::StrCat("model catalog: duplicate name '", catalog.models_[i].name, "'"));
    }
  }
  return catalog;
}

const ModelCatalog& ModelCatalog::Default() {
  static const ModelCatalog* const kCatalog = [] {
    absl::StatusOr<ModelCatalog> parsed = Parse(embedded::ModelCatalogData());
    SIM_CHECK(parsed.ok()) << "embedded models/data/models.textproto: " << parsed.status();
    return new ModelCatalog(*std::move(parsed));
  }();
  return *kCatalog;
}

absl::StatusOr<TransformerConfig> ModelCatalog::Find(std::string_view name) const {
  auto it = std::lower_bound(
      models_.begin(), models_.end(), name,
      [](const TransformerConfig& m, std::string_view n) { return m.name < n; });
  if (it != models_.end() && it->name == name) return *it;
  return absl::NotFoundError(absl::StrCat("unknown model preset '", std::string(name), "'; valid presets: ",
                                          absl::StrJoin(Names(), ", ")));
}

std::vector<std::string> ModelCatalog::Names() const {
  std::vector<std::string> names;
  names.reserve(models_.size());
  for (const TransformerConfig& m : models_) names.push_back(m.name);
  return names;
}

}  // namespace clustersim::models
