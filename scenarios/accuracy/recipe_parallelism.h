// File: scenarios/accuracy/recipe_parallelism.h
//
// What a validation row's training recipe states about how it splits the
// model, where the row's table does not: the pipeline layout (layers per
// model chunk) and the experts' tensor parallelism. Decided per stack and
// model (never per row), each from the recipe source named in the text.
//
// Megatron-Bridge performance recipes (NVIDIA-NeMo/Megatron-Bridge,
// scripts/performance and src/megatron/bridge/recipes, tags v0.1.0rc4
// 6725f704, v0.2.0 717c62de, v0.4.0 0fbfe7d3; NeMo containers 25.09, 25.11,
// 26.04):
// - every MoE recipe sets expert_tensor_parallel_size=1 (parallel folding);
// - DeepSeek-V3 (61 layers) takes its pipeline layout from a (pp, vp) table
//   in recipes/deepseek/deepseek_v3.py: 16 chunks are [4, 4 x 14, 1], 8 are
//   [8, 8 x 6, 5], 4 are [16, 16, 16, 13]; on H100 pp 8 x vp 4 the
//   performance script passes "Et|(tt|)*30mL": [1, 2 x 30, 0]. The recipe
//   trains one multi-token-prediction module (mtp_num_layers=1), on the last
//   chunk, except where the row says it ran without one;
// - Llama 3.1 405B and Qwen3-235B-A22B set account_for_embedding_ and
//   account_for_loss_in_pipeline_split: the embedding and the loss count as
//   one layer each, so with n = pp x vp chunks every chunk holds (L + 2) / n
//   layers and the first and last one fewer.
// - on GB200 (4 GPUs per compute tray) the performance launcher
//   (scripts/performance/utils/executors.py, v0.2.0 and v0.4.0) asks Slurm
//   for --segment = the largest divisor of the tray count up to 18 (one
//   NVL72 rack), so each NVLink domain holds 4 x segment consecutive ranks
//   (64 GPUs at 128 and 256 GPUs), aligned with the rank order.
// - the DeepSeek-V3 performance presets dispatch tokens with Megatron-Core's
//   flex dispatcher (HybridEP or DeepEP) or its all-to-all dispatcher, by
//   release and GPU (moe_flex_dispatcher_backend; the .cc names the file of
//   each release); the simulator costs HybridEP and DeepEP alike
//   (strategies/expert_dispatch.h).
// - the DeepSeek-V3 presets, and from 26.04 the GPT-OSS 120B ones, train
//   with selective recompute of named modules (recompute_granularity
//   "selective", recompute_modules; by release and GPU, the .cc names the
//   file of each release), which replaces Megatron-Core's default
//   attention-core replay; the Llama 3 8B H100 FP8-CS preset (25.11 on)
//   recomputes the first 5 layers in full (recompute_num_layers 5, method
//   "block"); the other Llama 3 / 3.1 and the Qwen3 presets of the tables'
//   rows recompute nothing (the .cc says why, per model).
// NeMo 2 performance scripts at the NeMo commits dgxc-benchmarking 25.05
// pins (stack "nemo-25.04..."; the .cc names the files): DeepSeek-V3's
// first/last stages take 64/pp - 1 and 64/pp - 2 layers, with one
// multi-token-prediction module and the launcher's selective recompute
// module (mla_up_proj on H100, core_attn on GB200); Llama 3.1 405B counts
// the embedding and the loss as layers, as above; Llama 4 Maverick
// (llama4_e128) dispatches all-to-all, recomputes nothing, and on H100
// (pp 1) runs without interleaving (launch.sh VP=1; the README's VP 12).
// Nemotron-H 56B (nemotronh_56b) recomputes nothing and trains in the
// script's default FP8 recipe, delayed scaling. Neither DeepSeek-V3 nor
// Nemotron-H overlaps TP communication: the DeepSeek-V3 script adds
// MegatronCommOverlapCallback with tp_comm_overlap=False, and the Nemotron-H
// script builds its recipe without performance_mode and so without the
// callback (its DDP config's overlap_param_gather=False then stands).
// Nemotron 3 Nano (Megatron-Bridge 26.04, tag v0.4.0) dispatches with HybridEP
// and recomputes nothing on GB200 and B200, and its H100 rows are refused (the
// preset recomputes the whole MoE layer).
// - the Qwen3 MoE presets that set moe_a2a_overlap (Megatron-Core's
//   overlap_moe_expert_parallel_comm): 25.11 (v0.2.0,
//   scripts/performance/configs/qwen3/workload_base_configs.py) Qwen3-235B-A22B
//   on H100 and B200 and Qwen3-30B-A3B on H100; 26.04 (v0.4.0,
//   configs/qwen/qwen3_workload_base_configs.py) Qwen3-235B-A22B on H100 (its
//   B200, B300, GB200, GB300 and Qwen3-30B-A3B H100 presets set it false).
//   25.09 (v0.1.0rc4) has no such setting for Qwen3.
// - the DeepSeek-V3 presets that set it: H100 in 25.09 (v0.1.0rc4
//   run_script.py) and 25.11 (v0.2.0); in 26.04 the B200 MXFP8 preset with
//   ep 32 (commit 5acef9309, tag v0.4.2); the others leave it off.
// - GPT-OSS 120B in 26.04 (v0.4.0 to v0.4.2, configs/gpt_oss/
//   gpt_oss_workload_base_configs.py): the V2 presets (global batch 1280)
//   dispatch with HybridEP on GB200 and B200 and overlap the all-to-all on
//   GB200; V1 (global batch 512) and the H100 presets do neither.
// - the Qwen3 MoE presets that dispatch with the flex dispatcher's HybridEP
//   backend (moe_flex_dispatcher_backend "hybridep"): 25.11 (v0.2.0) the
//   GB200 presets of both models; 26.04 (v0.4.0) Qwen3-30B-A3B on GB200, B200
//   and H100 and Qwen3-235B-A22B on GB200. The others dispatch all-to-all.
// Other stacks: expert TP 1 where the row's notes say "ETP1", the DeepEP
// dispatcher where they name DeepEP (NeMo AutoModel's 'TE + DeepEP' kernels).
//
// Example:
//   RecipeParallelism r = ForRecipe("nemo-25.11 (Megatron-Bridge + ...)", "",
//                                   "deepseek-v3-671b", "gb200-186gb", 61, 4, 4);
//   // r.layout = {4, 4, ..., 4, 1} (16 chunks), r.expert_tensor_parallel = 1
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_RECIPE_PARALLELISM_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_RECIPE_PARALLELISM_H_

#include <string>
#include <vector>

namespace clustersim::scenarios {

struct RecipeParallelism {
  std::vector<int> layout;         // layers per model chunk; empty: none stated
  // Virtual pipeline size the recipe runs where it differs from the row's
  // table (the launcher's own setting); 0: the row's.
  int virtual_pipeline = 0;
  int expert_tensor_parallel = 0;  // 0: unstated (the experts follow tp)
  int mtp_num_layers = 0;          // multi-token-prediction modules trained
  std::string moe_dispatcher;      // parallelism.moe_token_dispatcher; "": unstated
  // Selective recompute's modules (training.recompute_modules, with
  // recompute_granularity "selective"); empty: the stack's default recompute.
  std::vector<std::string> recompute_modules;
  // Full recompute by the block method (recompute_method "block"): the
  // layers of each model chunk replayed; 0: none stated.
  int recompute_block_layers = 0;
  // Megatron-Core's EP all-to-all overlap (moe_a2a_overlap ->
  // parallelism.overlap_moe_expert_parallel_comm); false: not set.
  bool moe_a2a_overlap = false;
  // The recipe leaves off an overlap the stack's default turns on:
  // Megatron-Core's tp_comm_overlap (TE userbuffers; off, the sequence-
  // parallel all-gathers and reduce-scatters run in the layer's program
  // order) and the distributed optimizer's overlap_param_gather.
  bool no_tp_comm_overlap = false;
  bool no_param_gather_overlap = false;
  std::string text;                // the assumption, for the row's report
  std::string missing;             // why the row's split cannot be pinned down, or ""
};

// `stack` is the row's framework cell, `notes` its notes, `preset` the model
// preset the row names ("" when none), `gpu` the catalog GPU, `layers` the
// model's layers, pp, vp the row's pipeline sizes and ep its expert
// parallelism, `global_batch` its global batch (0: unstated).
// GPUs per NVLink domain the stack's launcher gives a GB200 job of
// `num_gpus`, or 0 when it states none. Megatron-Bridge's and NeMo 25.04's
// scripts/performance launchers (the latter at the NeMo commits that
// dgxc-benchmarking 25.05 pins) pass Slurm --segment = the largest divisor of
// the tray count up to 18 for jobs beyond one rack.
int NvlinkDomainGpus(const std::string& stack, const std::string& gpu, int num_gpus);

// Layers whose activations a Megatron-Bridge performance preset offloads to
// host memory (cpu_offloading_num_layers), or 0. The Megatron-FSDP presets of
// the GB200 rows (tp 1 or 2, pp 1):
// - Llama 3 70B, GB200 BF16 20 and FP8-CS 40 layers: 25.09, tag v0.1.0rc4,
//   scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml (gb200
//   num_gpus_64 bf16, fp8_cs); 25.11, tag v0.2.0, configs/llama3/
//   workload_base_configs.py LLAMA3_70B_GB200_{BF16,FP8_CS}_BASE_CONFIG; 26.04,
//   tag v0.4.0, configs/llama/llama3_workload_base_configs.py
//   LLAMA3_70B_PRETRAIN_CONFIG_GB200_{BF16,FP8_CS}_V1 and _V2.
// - Llama 3.1 405B, GB200 FP8 (current or delayed scaling): 95 layers in
//   25.09 (llama31_405b_llm_pretrain.yaml gb200 num_gpus_128 fp8_ds, fp8_cs),
//   92 in 25.11 (configs/llama31/workload_base_configs.py
//   LLAMA31_405B_GB200_FP8_CS_BASE_CONFIG) and 26.04
//   (llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V1).
// `precision` is "bf16" or "fp8", `fp8_recipe` the row's ("current", "mxfp8",
// or "" for delayed).
int BridgeCpuOffloadLayers(const std::string& stack, const std::string& preset,
                           const std::string& gpu, const std::string& precision,
                           const std::string& fp8_recipe, int pp);

RecipeParallelism ForRecipe(const std::string& stack, const std::string& notes,
                            const std::string& preset, const std::string& gpu, int layers, int pp,
                            int vp, int ep = 1, int global_batch = 0);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_RECIPE_PARALLELISM_H_
