// File: scenarios/accuracy/row_mapping.h
//
// How a validation row's cells map onto the simulator's inputs: its GPU and
// model names onto catalog entries, its software stack onto a framework
// profile (models/data/frameworks.textproto), and what each source or stack
// leaves unstated onto the settings the row runs with. Every assumption is
// written into the row's report, decided per source or per stack (never per
// row), and documented in docs/accuracy.md.
//
// Example:
//   std::string gpu_note;
//   std::string gpu = CatalogGpu("H100-80GB (DGX H100)", &gpu_note);  //
//   h100-sxm5-80gb absl::StatusOr<RowAssumptions> a =
//   AssumptionsForStack("nemo-24.11 (...)");
//   // a->framework == "megatron-core", with the NeMo recipe's settings
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_ROW_MAPPING_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_ROW_MAPPING_H_

#include <string>

#include "absl/status/statusor.h"

namespace clustersim::scenarios {

// The settings a row runs with where its source is silent.
struct RowAssumptions {
  std::string framework;  // training.framework (a profile name)
  // When the row states none; 0: global batch / dp without pipeline
  // parallelism, 1 with it.
  int micro_batch = 1;
  std::string recompute;           // when the row's recompute cell is empty
  bool sequence_parallel = false;  // with tp > 1, when the row's cell is empty
  bool distributed_optimizer = false;
  bool overlap_grad_reduce = false;
  bool tp_comm_overlap = false;  // only with sequence parallelism
  bool overlap_param_gather = false;
  int zero_stage = 0;
  // The sharding with pipeline parallelism, where the stack changes it
  // (torchtitan keeps parameters whole across micro-batches: 2); 0: zero_stage.
  int zero_stage_with_pipeline = 0;
  // A setting that, stated in a row's notes for a mixture-of-experts model,
  // keeps parameters gathered across the step's micro-batches and defers the
  // gradient reduce-scatter to the last one: the row runs ZeRO-2 with
  // overlap_grad_reduce. "": none.
  std::string deferred_sync_setting;
  // A setting that, stated in a row's notes, runs attention through
  // Transformer Engine's DotProductAttention (cuDNN fused attention on
  // Hopper), as Megatron-Core does: the row takes the megatron-core profile's
  // attention factor, fitted on training steps, at its clock. "": none.
  std::string te_attention_setting;
  // A setting that, stated in a row's notes for a mixture-of-experts model,
  // routes every token to k neighbouring experts (NeMo AutoModel's
  // fake_balanced_gate): the row runs parallelism.moe_routing "round-robin".
  // "": none.
  std::string round_robin_routing_setting;
  int grad_reduce_bytes = 0;  // training.grad_reduce_bytes; 0: the profile's
  // The stack runs eager PyTorch unless the row says it compiled the model
  // (training.elementwise "eager" where StatesCompile is false).
  bool eager_unless_compiled = false;
  // The stack's selective checkpointing is per-op (torchtitan's
  // selective_ac_option "op", its default): a row's "selective" or
  // "selective (op)" runs recompute_granularity "selective+op"; "selective
  // (layer)" keeps Megatron's selective.
  bool op_selective = false;
  // With FP8 and tensor parallelism the stack runs torchao's float8 TP
  // styles, which all-gather in float8 (training.fp8_tp_gather), unless the
  // row states rowwise scaling.
  bool fp8_tensorwise_tp = false;
  std::string precision;  // when the row states none
  std::string attention;  // training.attention; "" = the stack's default
  std::string text;       // the whole assumption, for the report
};

// The published-runs.csv sources (NAR21, KOR22, MCORE24, NEMO2407, NEMOLONG;
// any other: Megatron-Core defaults of 2023).
RowAssumptions AssumptionsForSource(const std::string& source);

// A row that names its stack (the `framework` column of
// tests/validation/unseen/training-runs.csv, e.g. "nemo-25.04 (...)",
// "torchtitan 9dec370 ...", "jax-maxtext (...)"). NotFound, with the reason,
// for a stack no profile covers.
absl::StatusOr<RowAssumptions> AssumptionsForStack(const std::string& framework_cell);

// Whether a row's text (notes and source) says the run used torch.compile:
// "compile" or "torch.compile", but not "no compile".
bool StatesCompile(const std::string& text);

// The catalog GPU a row's `gpu` cell denotes, or "" when the catalog has none
// (MI300X). Boards the catalog stands in for (H100 96GB at 500 W) set `*note`.
std::string CatalogGpu(const std::string& cell, std::string* note);

// The board power limit a row's `gpu` cell states ("... at 500 W power
// limit ..."), in watts, or 0 when it states none.
double StatedPowerLimitW(const std::string& cell);

// The Omni-Path links per node a GPU cell states ("4 OmniPath links per
// node", BLOOM's Jean Zay nodes); 0 when it states none.
int StatedOmniPathLinks(const std::string& cell);

// The model preset a row's model name denotes ("Llama 3.1 405B" ->
// llama3.1-405b, "GPT-3 175B (Paxml ...)" -> gpt3-175b), or "" when the
// catalog has none.
std::string PresetFor(const std::string& model);

// Why a row's model cannot be built from its columns (a mixture of experts,
// latent attention or Mamba layers the table does not describe), or "".
std::string UnsupportedArchitecture(const std::string& model, const std::string& notes,
                                    const std::string& ep);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_ROW_MAPPING_H_
