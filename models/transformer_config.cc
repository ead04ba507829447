#include "models/transformer_config.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
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
  c.add_bias_linear = p.add_bias_linear();
  c.num_experts = p.num_experts();
  c.moe_top_k = p.moe_top_k();
  if (p.moe_capacity_factor() != 0) c.moe_capacity_factor = p.moe_capacity_factor();
  if (c.name.empty()) return absl::InvalidArgumentError("model preset without a name");
  if (p.source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("model '", c.name, "': source must be set"));
  }
  if (absl::Status s = ValidateTransformer(c); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("model '", c.name, "': ", s.message()));
  }
  return c;
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
  if (c.hidden_size % c.num_attention_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.hidden_size=", c.hidden_size, " is not divisible by model.num_attention_heads=",
        c.num_attention_heads, "; the head dimension must be a whole number"));
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

ParameterCounts CountParameters(const TransformerConfig& c) {
  const double h = c.hidden_size, f = c.ffn_hidden_size, V = c.vocab_size, s = c.seq_length;
  const double a = c.num_attention_heads, g = c.num_query_groups, d = c.head_dim();
  const bool gated = c.activation == Activation::kSwiglu;
  const double attention = 2.0 * h * d * (a + g);
  const double mlp_one = (gated ? 3.0 : 2.0) * h * f;
  const double mlp_bias = c.add_bias_linear ? f * (gated ? 2.0 : 1.0) + h : 0.0;
  const double experts = c.num_experts > 0 ? c.num_experts : 1;
  const double router = c.num_experts > 0 ? h * c.num_experts : 0.0;
  const double norm_size = c.norm == Norm::kLayerNorm ? 2.0 : 1.0;
  const double attention_bias = c.add_bias_linear ? (a + 2.0 * g) * d + h : 0.0;

  ParameterCounts p;
  p.per_layer = attention + attention_bias + experts * (mlp_one + mlp_bias) + router +
                2.0 * h * norm_size;
  p.expert_per_layer = c.num_experts > 0 ? experts * (mlp_one + mlp_bias) : 0.0;
  p.linear_per_layer = attention + experts * mlp_one;
  p.embedding = V * h + (c.learned_position_embeddings ? s * h : 0.0);
  p.final_norm = h * norm_size;
  p.lm_head = c.tied_embeddings ? 0.0 : V * h;
  return p;
}

}  // namespace clustersim::models
