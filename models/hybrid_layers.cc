#include "models/hybrid_layers.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace clustersim::models {

std::string_view LayerKindName(LayerKind k) {
  switch (k) {
    case LayerKind::kTransformer: return "transformer";
    case LayerKind::kMamba: return "mamba";
    case LayerKind::kAttention: return "attention";
    case LayerKind::kMlp: return "mlp";
    case LayerKind::kMoe: return "moe";
  }
  return "transformer";
}

absl::Status ValidateHybrid(const TransformerConfig& c) {
  if (!c.hybrid()) return absl::OkStatus();
  const std::string& p = c.hybrid_pattern;
  if (static_cast<int>(p.size()) != c.num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.hybrid_override_pattern has ", p.size(), " characters for model.num_layers=",
        c.num_layers, "; give one character per layer"));
  }
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != 'M' && p[i] != '*' && p[i] != '-' && p[i] != 'E') {
      return absl::InvalidArgumentError(absl::StrCat(
          "model.hybrid_override_pattern: '", std::string(1, p[i]), "' at layer ", i,
          " is not M (Mamba), * (attention), - (MLP) or E (mixture-of-experts)"));
    }
  }
  const bool moe_layers = p.find('E') != std::string::npos;
  if (moe_layers != (c.num_experts > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.hybrid_override_pattern ", moe_layers ? "has" : "has no",
        " E (mixture-of-experts) layers but model.num_experts=", c.num_experts,
        "; set num_experts > 0 exactly when the pattern holds E"));
  }
  for (auto [field, value] : {std::pair<const char*, int>{"moe_first_dense_layers",
                                                          c.moe_first_dense_layers},
                              {"moe_layer_step", c.moe_layer_step > 1 ? c.moe_layer_step : 0},
                              {"mtp_num_layers", c.mtp_num_layers}}) {
    if (value != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model.", field, "=", value,
          " is not modelled with model.hybrid_override_pattern (the pattern places every "
          "layer); set it to 0"));
    }
  }
  if (p.find('M') == std::string::npos) return absl::OkStatus();
  for (auto [field, value] :
       {std::pair<const char*, int>{"mamba_num_heads", c.mamba_num_heads},
        {"mamba_head_dim", c.mamba_head_dim},
        {"mamba_state_dim", c.mamba_state_dim},
        {"mamba_num_groups", c.mamba_num_groups},
        {"mamba_conv_kernel", c.mamba_conv_kernel},
        {"mamba_chunk_size", c.mamba_chunk_size}}) {
    if (value <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model.", field, " must be > 0 with Mamba (M) layers (got ", value,
          "); Nemotron-H 56B: 256 heads of 64, state 256, 8 groups, conv 4, chunk 128"));
    }
  }
  if (c.mamba_num_heads % c.mamba_num_groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.mamba_num_heads=", c.mamba_num_heads, " is not divisible by model.mamba_num_groups=",
        c.mamba_num_groups, "; each group of B and C serves the same number of heads"));
  }
  return absl::OkStatus();
}

MambaWeights MambaMixerWeights(const TransformerConfig& c) {
  const double h = c.hidden_size, heads = c.mamba_num_heads;
  const double d_inner = c.mamba_d_inner(), conv = c.mamba_conv_dim();
  MambaWeights w;
  w.linear = h * c.mamba_in_proj_width() + d_inner * h;
  w.total = w.linear + conv * (c.mamba_conv_kernel + 1) + 3.0 * heads + d_inner;
  return w;
}

MambaFlops MambaMixerForwardFlops(const TransformerConfig& c) {
  const double s = c.seq_length, heads = c.mamba_num_heads, p = c.mamba_head_dim;
  const double n = c.mamba_state_dim, q = c.mamba_chunk_size, g = c.mamba_num_groups;
  MambaFlops f;
  f.projections = 2.0 * s * MambaMixerWeights(c).linear;
  f.scan = 2.0 * s * heads * p * (2.0 * n + q) + 2.0 * s * q * n * g;
  return f;
}

}  // namespace clustersim::models
