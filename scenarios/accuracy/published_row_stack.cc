// What a training row's software stack does to its scenario: the recompute
// granularity and the parallelism, sharding, overlap and precision settings
// (published_row_stack.h).
#include "scenarios/accuracy/published_row_stack.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "models/framework_profile.h"
#include "models/transformer_config.h"
#include "sim/check.h"

namespace clustersim::scenarios::validation_internal {
namespace {

// Whether the row's model routes tokens to experts (stated or its preset's).
bool MixtureOfExperts(const config::ModelConfig& m) {
  if (m.has_num_experts()) return m.num_experts() > 0;
  if (m.preset().empty()) return false;
  const absl::StatusOr<models::TransformerConfig> c =
      models::ModelCatalog::Default().Find(m.preset());
  return c.ok() && c->num_experts > 0;
}

}  // namespace

int MegatronFsdpSize(const std::string& notes) {
  constexpr std::string_view kKey = "FSDP column = ";
  const size_t at = notes.find(kKey);
  if (at == std::string::npos) return 0;
  size_t end = at + kKey.size();
  while (end < notes.size() && absl::ascii_isdigit(static_cast<unsigned char>(notes[end]))) ++end;
  int n = 0;
  return absl::SimpleAtoi(notes.substr(at + kKey.size(), end - at - kKey.size()), &n) ? n : 0;
}

// The recompute granularity to simulate: the row's, the recipe's recompute
// modules or block recompute, or the stack's default.
std::string RowRecompute(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                         const RowAssumptions& a, const RecipeParallelism& recipe,
                         config::Scenario* s, std::string* assumptions) {
  // "selective (op)" -> "selective": the simulator's selective is Megatron's,
  // or torchtitan's per-op policy ("selective+op") for a stack whose
  // selective is per-op. "selective+mlp_up" (a JAX remat policy the row
  // states) passes through.
  const std::string recompute_cell = t.Get(row, "recompute");
  std::string recompute = recompute_cell.substr(0, recompute_cell.find(" ("));
  if (a.op_selective && recompute == "selective" &&
      !absl::StrContains(recompute_cell, "(layer)")) {
    recompute = "selective+op";
    absl::StrAppend(assumptions,
                    "per-op selective checkpointing (torchtitan's policy: every second mm, the "
                    "elementwise ops and the sequence-parallel gathers replayed; fp8 linears "
                    "replayed whole); ");
  }
  // torchtitan's layer-level selective checkpointing (selective_ac_option
  // an integer n, "2" by default: torchtitan/config_manager.py at
  // 1c96a016d) wraps every n-th transformer block in a full checkpoint
  // (_apply_ac_to_transformer_block in parallelize_llama.py): every second
  // block recomputed whole, costed as Megatron's block recompute of half
  // of each stage's layers.
  const int stage_layers =
      s->model().num_layers() / std::max(1, s->parallelism().pipeline_model_parallel_size());
  if (a.op_selective && recompute == "selective" &&
      absl::StrContains(recompute_cell, "(layer)") && stage_layers >= 2) {
    recompute = "full";
    s->mutable_training()->set_recompute_method("block");
    s->mutable_training()->set_recompute_num_layers(stage_layers / 2);
    absl::StrAppend(assumptions,
                    "layer-level selective checkpointing (torchtitan's default "
                    "selective_ac_option 2): every second block recomputed whole; ");
  }
  if (recompute.empty() && !recipe.recompute_modules.empty()) {
    recompute = "selective";
    for (const std::string& m : recipe.recompute_modules) {
      s->mutable_training()->add_recompute_modules(m);
    }
  }
  if (recompute.empty() && recipe.recompute_block_layers > 0) {
    recompute = "full";
    s->mutable_training()->set_recompute_method("block");
    s->mutable_training()->set_recompute_num_layers(recipe.recompute_block_layers);
  }
  if (recompute.empty()) recompute = a.recompute;
  return recompute;
}

// The FP8 scaling recipe a row's notes state, or "" (the scenario default,
// delayed scaling: Megatron-Core's --fp8-recipe default, and NeMo 2's up to
// 24.12, whose rows state no recipe). Megatron-Bridge's performance tables
// name block-scaled runs MXFP8 ("FP8-MX") and per-tensor runs FP8-CS,
// current scaling (docs/performance-summary.md at 25.11); a Megatron-Bridge
// row marked per-tensor is read as FP8-CS. torchtitan rows stating "float8
// rowwise" ran torchao's rowwise recipe (float8.recipe_name "rowwise").
std::string Fp8RecipeOfRow(const std::string& notes, const std::string& source) {
  if (absl::StrContains(notes, "MXFP8") || absl::StrContains(notes, "FP8-MX")) return "mxfp8";
  if (absl::StrContains(absl::AsciiStrToLower(notes), "float8 rowwise")) return "rowwise";
  if (absl::StrContains(notes, "FP8-CS") || absl::StrContains(notes, "current scaling")) {
    return "current";
  }
  if (absl::StrContains(source, "Megatron-Bridge") && absl::StrContains(notes, "per-tensor")) {
    return "current";
  }
  return "";
}

// What the row's software stack does: sequence parallelism, the optimizer's
// sharding and overlaps, its profile, gradient-reduction precision, eager or
// compiled elementwise kernels, precision and attention kernel.
void StackTraining(const sim::CsvTable& t, const sim::CsvTable::Row& row, const RowAssumptions& a,
                   const std::string& notes, int tp, int pp, config::Scenario* s,
                   std::string* assumptions) {
  config::ParallelismConfig* p = s->mutable_parallelism();
  const std::string sp = t.Get(row, "seq_parallel");
  const bool sequence_parallel = sp.empty() ? (a.sequence_parallel && tp > 1) : sp == "yes";
  p->set_sequence_parallel(sequence_parallel);
  p->set_use_distributed_optimizer(a.distributed_optimizer);
  p->set_overlap_grad_reduce(a.overlap_grad_reduce);
  if (a.tp_comm_overlap && sequence_parallel) p->set_tp_comm_overlap(true);
  if (a.overlap_param_gather) p->set_overlap_param_gather(true);
  // FSDP's SHARD_GRAD_OP keeps parameters whole: ZeRO stage 2.
  if (a.zero_stage > 0) {
    const int stage = pp > 1 && a.zero_stage_with_pipeline > 0 ? a.zero_stage_with_pipeline
                                                                 : a.zero_stage;
    p->set_zero_stage(absl::StrContains(notes, "SHARD_GRAD_OP") ? 2 : stage);
  }
  // Megatron-Bridge's performance tables give a Megatron-FSDP size ("FSDP
  // column = N" in the notes; 0: DDP). With N > 0 its performance scripts run
  // Megatron-FSDP with data_parallel_sharding_strategy "optim_grads_params":
  // parameters, gradients and optimizer states sharded over the data-parallel
  // group, parameters gathered per layer (scripts/performance/utils/overrides.py
  // _set_megatron_fsdp_overrides, NVIDIA-NeMo/Megatron-Bridge 067f987df; the
  // use_megatron_fsdp rows of scripts/performance/configs/llama3 at v0.1.0rc4
  // and v0.2.0): ZeRO-3.
  if (const int fsdp = MegatronFsdpSize(notes); fsdp > 0 && a.framework == "megatron-core") {
    p->set_zero_stage(3);
    absl::StrAppend(assumptions, "Megatron-FSDP over ", fsdp,
                    " GPUs (stated FSDP column): parameters, gradients and optimizer states "
                    "sharded over the data-parallel group (ZeRO-3, optim_grads_params); ");
  }
  // Hybrid sharding the row states (the dp_shard column): ZeRO-3 inside
  // shard groups of that many data-parallel ranks, replicated across them.
  int shard = 0;
  const int dp = s->cluster().num_gpus() / (tp * pp * std::max(1, p->context_parallel_size()));
  if (p->zero_stage() == 3 && absl::SimpleAtoi(t.Get(row, "dp_shard"), &shard) && shard > 0 &&
      shard < dp) {
    p->set_data_parallel_shard_size(shard);
    absl::StrAppend(assumptions, "hybrid sharding (stated): ZeRO-3 over groups of ", shard,
                    " data-parallel ranks, replicated ", dp / shard, " times; ");
  }
  // A mixture-of-experts model whose stack defers the gradient sync and keeps
  // parameters gathered across micro-batches (RowAssumptions::
  // deferred_sync_setting): ZeRO-2, parameters gathered once per step and
  // gradients reduce-scattered once. FSDP2 reduce-scatters each unit from its
  // post-backward hook while the last backward goes on: overlap_grad_reduce.
  // Its first forward's prefetched all-gather is costed as ZeRO-2's gather
  // after the optimizer step (overlap_param_gather needs Megatron's
  // distributed optimizer), and the once-per-step FSDP2 copy passes are not
  // charged.
  if (a.zero_stage == 3 && !a.deferred_sync_setting.empty() &&
      absl::StrContains(notes, a.deferred_sync_setting) && MixtureOfExperts(s->model())) {
    p->set_zero_stage(2);
    p->set_overlap_grad_reduce(true);
    absl::StrAppend(assumptions, a.deferred_sync_setting,
                    " (stated; MoE): parameters gathered once per step and gradients "
                    "reduce-scattered once, in the last micro-batch's backward (ZeRO-2); ");
  }
  if (!a.round_robin_routing_setting.empty() &&
      absl::StrContains(notes, a.round_robin_routing_setting) && MixtureOfExperts(s->model())) {
    p->set_moe_routing("round-robin");
    absl::StrAppend(assumptions, a.round_robin_routing_setting,
                    " (stated; MoE): token t routed to experts t·k ... t·k + k - 1 mod E, so "
                    "DeepEP sends it to the one or two ranks holding them; ");
  }
  config::TrainingConfig* tr = s->mutable_training();
  tr->set_framework(a.framework);
  if (!a.te_attention_setting.empty() && absl::StrContains(notes, a.te_attention_setting)) {
    // megatron-core is the catalog's default profile, always present.
    absl::StatusOr<const models::FrameworkProfile*> te =
        models::FrameworkCatalog::Default().Find(models::FrameworkCatalog::kDefault);
    SIM_CHECK(te.ok()) << te.status();
    tr->set_framework_attention_factor((*te)->attention_factor.value);
    tr->set_attention_at_sustained_clock(false);
    absl::StrAppend(assumptions, a.te_attention_setting,
                    " (stated): Transformer Engine's fused attention at the megatron-core "
                    "profile's attention factor; ");
  }
  // Composer's FSDP mixed precision PURE reduces in bf16 (DEFAULT: fp32, the
  // pytorch-fsdp profile's value).
  if (absl::StrContains(notes, "FSDP MP mode PURE")) {
    tr->set_grad_reduce_bytes(2);
  } else if (a.grad_reduce_bytes > 0) {
    tr->set_grad_reduce_bytes(a.grad_reduce_bytes);
  }
  if (a.eager_unless_compiled) {
    if (StatesCompile(absl::StrCat(notes, " ", t.Get(row, "source")))) {
      absl::StrAppend(assumptions, "torch.compile (stated): fused elementwise kernels; ");
    } else {
      tr->set_elementwise("eager");
      absl::StrAppend(assumptions,
                      "eager PyTorch (no torch.compile stated; the stack's default): composite "
                      "RMSNorm, RoPE and SwiGLU kernels; ");
    }
  }
  const std::string precision = t.Get(row, "precision");
  tr->set_precision(!precision.empty()                   ? precision
                    : absl::StrContains(notes, "FP8")    ? "fp8"
                    : absl::StrContains(notes, "fp16") ? "fp16"
                                                       : a.precision);
  if (tr->precision() == "fp8") {
    const std::string recipe = Fp8RecipeOfRow(notes, t.Get(row, "source"));
    if (!recipe.empty()) {
      tr->set_fp8_recipe(recipe);
      absl::StrAppend(assumptions,
                      "FP8 recipe from the notes (MXFP8 or FP8-MX: mxfp8; FP8-CS, current "
                      "scaling or Megatron-Bridge per-tensor: current; float8 rowwise: "
                      "rowwise); ");
    }
  }
  // Float8 tensor parallelism (RowAssumptions::fp8_tensorwise_tp): the
  // sequence-parallel all-gathers move float8 unless the row states rowwise
  // scaling, which keeps DTensor's 16-bit styles.
  if (tr->precision() == "fp8" && a.fp8_tensorwise_tp && p->sequence_parallel() &&
      !absl::StrContains(absl::AsciiStrToLower(notes), "rowwise")) {
    tr->set_fp8_tp_gather(true);
    absl::StrAppend(assumptions,
                    "Float8 tensor parallelism (tensorwise scaling): sequence-parallel "
                    "all-gathers in float8; ");
  }
  if (!a.attention.empty()) tr->set_attention(a.attention);
}

}  // namespace clustersim::scenarios::validation_internal
