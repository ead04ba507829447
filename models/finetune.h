// File: models/finetune.h
//
// What a fine-tuning run trains: everything (full), or low-rank adapters on a
// frozen base (LoRA, Hu et al. 2021, arXiv 2106.09685) that is kept in 16 bits
// or quantised to 4-bit NormalFloat (QLoRA, Dettmers et al. 2023, arXiv
// 2305.14314). The memory model (memory_model.h) turns this into bytes.
//
// A LoRA adapter on a linear layer W (in x out) adds A (in x r) and
// B (r x out): r·(in + out) trainable parameters. Under tensor parallelism
// the adapter follows its layer (NeMo's ParallelLinearAdapter): on a
// column-parallel layer (Q, K, V, gate, up) A is replicated and B split,
// r·(in + out/tp); on a row-parallel one (O, down) A is split and B
// replicated, r·(in/tp + out). MoE experts get one adapter each on their
// gate/up/down projections (E/ep local experts).
//
// Example:
//   absl::StatusOr<models::FinetuneSpec> f =
//       models::ParseFinetune("qlora", /*lora_rank=*/64, /*target_modules=*/{});
//   if (!f.ok()) return f.status();   // "training.finetune=\"qlora4\" is not known; ..."
//   memory_inputs.finetune = *f;
#ifndef CLUSTERSIM_MODELS_FINETUNE_H_
#define CLUSTERSIM_MODELS_FINETUNE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/transformer_config.h"

namespace clustersim::models {

enum class FinetuneMethod { kFull, kLora, kQlora };

// Which linear layers carry adapters, by their Hugging Face names. The
// default, every attention and MLP projection, is the QLoRA paper's setup
// ("LoRA on all linear transformer block layers", §4).
struct LoraTargets {
  bool q_proj = true, k_proj = true, v_proj = true, o_proj = true;
  bool gate_proj = true, up_proj = true, down_proj = true;  // non-gated: up = fc1, down = fc2
};

struct FinetuneSpec {
  FinetuneMethod method = FinetuneMethod::kFull;
  int lora_rank = 64;  // the QLoRA paper's r = 64 (§4)
  LoraTargets targets;
};

// QLoRA storage of a frozen base weight: 4-bit NF4 codes plus, with double
// quantisation, an 8-bit absmax per block of 64 weights and an fp32 constant
// per 256 blocks: (4 + 8/64 + 32/(64·256)) / 8 = 0.5159 bytes per parameter
// (QLoRA paper §3: double quantisation cuts the constants from 32/64 = 0.5 to
// 0.127 bits per parameter).
inline constexpr double kNf4BytesPerParameter = (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8.0;

// Trainable adapter state per parameter, as PEFT trains QLoRA: adapter
// weights and gradients in 16 bits (the paper's "LoRA parameters take up only
// 26 MB" for 0.2% of a 7B model = 2 B/param) and 32-bit Adam m and v; no
// fp32 master copy.
inline constexpr double kAdapterWeightBytes = 2, kAdapterGradientBytes = 2,
                        kAdapterOptimizerBytes = 8;

// method: "full" | "lora" | "qlora" (empty = "full"); lora_rank 0 = the
// default (64); target_modules: Hugging Face names q_proj, k_proj, v_proj,
// o_proj, gate_proj, up_proj, down_proj, or "all-linear" (empty = all).
// InvalidArgument naming training.finetune / training.lora_rank /
// training.lora_target_modules.
absl::StatusOr<FinetuneSpec> ParseFinetune(std::string_view method, int lora_rank,
                                           const std::vector<std::string>& target_modules);

// InvalidArgument when the spec does not fit the model: rank < 1, LoRA with
// no target. gate_proj is ignored on non-gated MLPs (GPT has none).
absl::Status ValidateFinetune(const TransformerConfig& c, const FinetuneSpec& f);

// Trainable adapter parameters of one transformer layer on one rank (see the
// header comment for the TP split). 0 for full fine-tuning.
// REQUIRES: ValidateFinetune(c, f).ok(), tensor_parallel and expert_parallel
// dividing the model as ValidateShard checks.
double LoraParametersPerLayer(const TransformerConfig& c, const FinetuneSpec& f,
                              int tensor_parallel, int expert_parallel);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FINETUNE_H_
