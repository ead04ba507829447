#include "scenarios/input/resolve_recompute.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

absl::StatusOr<models::Recompute> ParseRecompute(std::string_view s) {
  if (s == "none") return models::Recompute::kNone;
  if (s == "selective" || s == "selective+mlp_up" || s == "selective+op") {
    return models::Recompute::kSelective;
  }
  if (s == "full") return models::Recompute::kFull;
  return absl::InvalidArgumentError(
      absl::StrCat("training.recompute_granularity=\"", std::string(s),
                   "\" is not known; use none, selective, selective+mlp_up, selective+op or full"));
}

// training.recompute_modules: Megatron-Core module names; the list replaces
// the default (the attention core alone).
// training.recompute_method and recompute_num_layers: Megatron-Core's, which
// it reads only with full recompute.
absl::Status ParseRecomputeMethod(const config::TrainingConfig& t, strategies::ParallelConfig* pc) {
  const bool method = t.has_recompute_method(), layers = t.has_recompute_num_layers();
  if (!method && !layers) return absl::OkStatus();
  if (pc->recompute != models::Recompute::kFull) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.", method ? "recompute_method" : "recompute_num_layers",
        " needs training.recompute_granularity=\"full\" (Megatron reads it with full recompute "
        "only); set it or drop the field"));
  }
  if (method && t.recompute_method() == "block") {
    pc->recompute_method = models::RecomputeMethod::kBlock;
  } else if (method && t.recompute_method() != "uniform") {
    return absl::InvalidArgumentError(
        absl::StrCat("training.recompute_method=\"", t.recompute_method(),
                     "\" is not a recompute method; use \"uniform\" or \"block\""));
  }
  if (layers && t.recompute_num_layers() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.recompute_num_layers=", t.recompute_num_layers(),
        " must be >= 1 (layers per checkpointed group, or replayed per chunk); use 1 or more"));
  }
  if (layers) pc->recompute_num_layers = t.recompute_num_layers();
  return absl::OkStatus();
}

absl::StatusOr<models::RecomputeModules> ParseRecomputeModules(
    const google::protobuf::RepeatedPtrField<std::string>& names, models::Recompute recompute) {
  models::RecomputeModules m;
  if (names.empty()) return m;
  if (recompute != models::Recompute::kSelective) {
    return absl::InvalidArgumentError(
        "training.recompute_modules needs training.recompute_granularity=\"selective\" "
        "(Megatron applies recompute modules only to selective recompute); set it or drop the "
        "list");
  }
  m.core_attn = false;
  for (const std::string& name : names) {
    bool* flag = name == "core_attn"     ? &m.core_attn
                 : name == "mla_up_proj" ? &m.mla_up_proj
                 : name == "moe_act"     ? &m.moe_act
                 : name == "layernorm"   ? &m.layernorm
                 : name == "mlp"         ? &m.mlp
                                         : nullptr;
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "training.recompute_modules: \"", name,
          "\" is not a modelled module; use core_attn, mla_up_proj, moe_act, layernorm or mlp"));
    }
    *flag = true;
  }
  return m;
}

}  // namespace

absl::Status ResolveRecompute(const config::TrainingConfig& t,
                              const models::TransformerConfig& model,
                              strategies::ParallelConfig* pc) {
  absl::StatusOr<models::Recompute> rc =
      ParseRecompute(t.has_recompute_granularity() ? t.recompute_granularity() : "none");
  if (!rc.ok()) return rc.status();
  pc->recompute = *rc;
  pc->recompute_mlp_up = t.recompute_granularity() == "selective+mlp_up";
  CLUSTERSIM_RETURN_IF_ERROR(ParseRecomputeMethod(t, pc));
  absl::StatusOr<models::RecomputeModules> modules =
      ParseRecomputeModules(t.recompute_modules(), pc->recompute);
  if (!modules.ok()) return modules.status();
  pc->recompute_modules = *modules;
  // torchtitan's per-op policy saves the attention core's output.
  pc->recompute_op_sac = t.recompute_granularity() == "selective+op";
  if (pc->recompute_op_sac) {
    if (t.recompute_modules_size() > 0) {
      return absl::InvalidArgumentError(
          "training.recompute_modules are Megatron-Core's and recompute_granularity="
          "\"selective+op\" is torchtitan's per-op policy; drop the list or use \"selective\"");
    }
    pc->recompute_modules.core_attn = false;
  }
  if (pc->recompute_mlp_up && model.num_experts > 0) {
    return absl::InvalidArgumentError(
        "training.recompute_granularity=\"selective+mlp_up\" replays a dense MLP and this model "
        "has routed experts; use selective");
  }
  return absl::OkStatus();
}

void EchoRecompute(const config::TrainingConfig& t, const strategies::ParallelConfig& pc,
                   config::TrainingConfig* et) {
  et->set_recompute_granularity(t.has_recompute_granularity() ? t.recompute_granularity()
                                                              : "none");
  // Full recompute's method and layer count, both resolved, when either is set.
  if (t.has_recompute_method() || t.has_recompute_num_layers()) {
    et->set_recompute_method(pc.recompute_method == models::RecomputeMethod::kBlock ? "block"
                                                                                      : "uniform");
    et->set_recompute_num_layers(pc.recompute_num_layers);
  }
  // The modules selective recompute replays (empty without it), so a default
  // run shows Megatron's "core_attn".
  et->clear_recompute_modules();
  if (pc.recompute == models::Recompute::kSelective) {
    const models::RecomputeModules& m = pc.recompute_modules;
    for (const auto& [on, name] : {std::pair{m.core_attn, "core_attn"},
                                   std::pair{m.mla_up_proj, "mla_up_proj"},
                                   std::pair{m.moe_act, "moe_act"},
                                   std::pair{m.layernorm, "layernorm"}, std::pair{m.mlp, "mlp"}}) {
      if (on) et->add_recompute_modules(name);
    }
  }
}

}  // namespace clustersim::scenarios
