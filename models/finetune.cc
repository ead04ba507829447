#include "models/finetune.h"

#include "absl/strings/str_cat.h"

namespace clustersim::models {

absl::StatusOr<FinetuneSpec> ParseFinetune(std::string_view method, int lora_rank,
                                           const std::vector<std::string>& target_modules) {
  FinetuneSpec f;
  if (method.empty() || method == "full") {
    f.method = FinetuneMethod::kFull;
  } else if (method == "lora") {
    f.method = FinetuneMethod::kLora;
  } else if (method == "qlora") {
    f.method = FinetuneMethod::kQlora;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("training.finetune=\"", std::string(method),
                                                   "\" is not known; use full, lora or qlora"));
  }
  if (lora_rank < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("training.lora_rank must be > 0 (got ", lora_rank, ")"));
  }
  if (lora_rank > 0) f.lora_rank = lora_rank;
  if (!target_modules.empty()) {
    LoraTargets t{false, false, false, false, false, false, false};
    for (const std::string& m : target_modules) {
      if (m == "all-linear") {
        t = LoraTargets{};
      } else if (m == "q_proj") {
        t.q_proj = true;
      } else if (m == "k_proj") {
        t.k_proj = true;
      } else if (m == "v_proj") {
        t.v_proj = true;
      } else if (m == "o_proj") {
        t.o_proj = true;
      } else if (m == "gate_proj") {
        t.gate_proj = true;
      } else if (m == "up_proj") {
        t.up_proj = true;
      } else if (m == "down_proj") {
        t.down_proj = true;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("training.lora_target_modules: \"", m,
                         "\" is not known; use q_proj, k_proj, v_proj, "
                         "o_proj, gate_proj, up_proj, down_proj or all-linear"));
      }
    }
    f.targets = t;
  }
  return f;
}

absl::Status ValidateFinetune(const TransformerConfig& c, const FinetuneSpec& f) {
  if (f.method == FinetuneMethod::kFull) return absl::OkStatus();
  if (f.lora_rank < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("training.lora_rank must be > 0 (got ", f.lora_rank, ")"));
  }
  const LoraTargets& t = f.targets;
  if (!(t.q_proj || t.k_proj || t.v_proj || t.o_proj || t.gate_proj || t.up_proj || t.down_proj)) {
    return absl::InvalidArgumentError(
        "training.lora_target_modules selects no layer; name at least one, or all-linear");
  }
  return absl::OkStatus();
}

double LoraParametersPerLayer(const TransformerConfig& c, const FinetuneSpec& f,
                              int tensor_parallel, int expert_parallel) {
  if (f.method == FinetuneMethod::kFull) return 0;
  const double r = f.lora_rank, tp = tensor_parallel, h = c.hidden_size;
  const double q_width = static_cast<double>(c.num_attention_heads) * c.head_dim();
  const double kv_width = static_cast<double>(c.num_query_groups) * c.head_dim();
  const double ffn = c.ffn_hidden_size;
  auto column = [&](double in, double out) { return r * (in + out / tp); };
  auto row = [&](double in, double out) { return r * (in / tp + out); };
  const LoraTargets& t = f.targets;
  double attention = 0;
  if (t.q_proj) attention += column(h, q_width);
  if (t.k_proj) attention += column(h, kv_width);
  if (t.v_proj) attention += column(h, kv_width);
  if (t.o_proj) attention += row(q_width, h);
  const bool gated = c.activation == Activation::kSwiglu;
  double mlp = 0;
  if (t.gate_proj && gated) mlp += column(h, ffn);
  if (t.up_proj) mlp += column(h, ffn);
  if (t.down_proj) mlp += row(ffn, h);
  const double mlp_copies = c.num_experts > 0 ? c.num_experts / expert_parallel : 1;
  return attention + mlp * mlp_copies;
}

}  // namespace clustersim::models
