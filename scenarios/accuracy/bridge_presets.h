// File: scenarios/accuracy/bridge_presets.h
//
// What Megatron-Bridge's performance presets set, by release, model and GPU,
// read from the scripts at the tags each function cites: the pipeline layout,
// recompute modules, MoE token dispatcher and expert all-to-all overlap that
// ForRecipe (recipe_parallelism.h) maps a validation row onto. Releases are
// the NeMo container versions in a row's stack cell ("25.09", "25.11",
// "26.04"); GPUs are catalog names ("h100-sxm5-80gb", "b200-sxm-180gb",
// "gb200-186gb"), matched by prefix.
//
// Example:
//   BridgeRelease("nemo-25.11 (Megatron-Bridge v0.2.0)")  // "25.11"
//   DeepSeekLayout("gb200-186gb", 8, 1)                   // {8, 8, ..., 5}
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_BRIDGE_PRESETS_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_BRIDGE_PRESETS_H_

#include <string>
#include <vector>

namespace clustersim::scenarios {

// `n` chunks: `first`, then `middle` layers in each of n - 2, then `last`.
std::vector<int> ChunkLayers(int n, int first, int middle, int last);

// DeepSeek-V3's layout table (recipes/deepseek/deepseek_v3.py, the same at
// v0.1.0rc4, v0.2.0 and v0.4.0), keyed by (pp, vp); H100 pp 8 x vp 4 from the
// performance script's "Et|(tt|)*30mL" (scripts/performance, v0.1.0rc4
// run_script.py, v0.2.0 deepseek_llm_pretrain.py, v0.4.0
// deepseek_workload_base_configs.py).
std::vector<int> DeepSeekLayout(const std::string& gpu, int pp, int vp);

// The Megatron-Bridge release of a row's stack cell ("nemo-25.11 (...)":
// "25.11"), or "".
std::string BridgeRelease(const std::string& stack);

// The flex-dispatcher backend (moe_flex_dispatcher_backend) of Megatron-Bridge's
// DeepSeek-V3 performance presets, by release and GPU, or "" for Megatron-Core's
// all-to-all dispatcher:
// - 25.09, tag v0.1.0rc4, scripts/performance/run_script.py: DeepEP on H100
//   (enable_deepep); on B200 and GB200 the presets drop tokens, which turns
//   DeepEP off ("Using token drop, disabling DeepEP").
// - 25.11, tag v0.2.0, scripts/performance/configs/deepseek/
//   workload_base_configs.py: hybridep on GB200, deepep on H100, none on B200
//   (set_workload_base_configs then sets moe_token_dispatcher_type alltoall).
// - 26.04, tag v0.4.0, configs/deepseek/deepseek_workload_base_configs.py:
//   hybridep; the B200 MXFP8 preset with ep 32 (commit 5acef9309, "b200 DSv3
//   better cfg") deepep.
// Other releases: hybridep.
std::string DeepSeekDispatcher(const std::string& release, const std::string& gpu, int ep);

// Selective recompute's modules of a Megatron-Bridge performance preset, by
// model, release and GPU; `name` is set to the model's name for the row's
// report. The presets of the other models the tables hold state none:
// - Qwen3 (30B-A3B, 235B-A22B): the performance scripts reset
//   recompute_granularity, recompute_method and recompute_num_layers to None
//   (v0.1.0rc4 configs/qwen3/*_llm_pretrain.yaml; v0.2.0
//   configs/qwen3/qwen3_llm_pretrain.py and v0.4.0
//   configs/qwen/qwen3_llm_pretrain.py set_qwen3_common_configs), and no
//   preset lists modules.
// - Llama 3 70B and Llama 3.1 405B: no preset of the tables' GPUs and
//   precisions recomputes (v0.1.0rc4 configs/llama3 and llama31 yaml: only
//   B200 FP8 70B, recompute_num_layers 5; v0.4.0
//   llama31_workload_base_configs.py: B200 and GB200 NVFP4 V1
//   recompute_num_layers 1, reset to None by GB200 NVFP4 V2).
// - Llama 3 8B: see BridgeRecomputeBlockLayers.
std::vector<std::string> BridgeRecomputeModules(const std::string& release,
                                                const std::string& preset, const std::string& gpu,
                                                int ep, std::string* name);

// Full recompute by the block method (recompute_granularity "full",
// recompute_method "block") of a Megatron-Bridge performance preset: how many
// layers of each model chunk it replays, or 0 for none. The Llama 3 8B H100
// FP8-CS preset sets recompute_num_layers 5 (25.11, tag v0.2.0,
// scripts/performance/configs/llama3/workload_base_configs.py
// LLAMA3_8B_H100_FP8_CS_BASE_CONFIG; 26.04, tag v0.4.0,
// configs/llama/llama3_workload_base_configs.py
// LLAMA3_8B_PRETRAIN_CONFIG_H100_FP8_CS_V1), which utils/helpers.py
// set_recompute_overrides turns into full recompute by the block method: the
// first 5 of the 32 layers (one chunk: tp = pp = 1). The 25.09 preset (tag
// v0.1.0rc4, configs/llama3/llama3_8b_llm_pretrain.yaml, h100 fp8_cs) sets
// none, nor do the H100 BF16 and other GPUs' presets. A row is FP8-CS when
// its notes say so.
int BridgeRecomputeBlockLayers(const std::string& release, const std::string& preset,
                               const std::string& gpu, const std::string& notes);

// Whether the release's Qwen3 MoE performance preset for `gpu` sets
// moe_a2a_overlap (Megatron-Core's overlap_moe_expert_parallel_comm):
// - 25.11, tag v0.2.0, scripts/performance/configs/qwen3/
//   workload_base_configs.py: QWEN3_235B_A22B_{H100,B200}_{BF16,FP8_CS}
//   and QWEN3_30B_A3B_H100_{BF16,FP8_CS}_BASE_CONFIG set it true, the
//   GB200 / GB300 presets leave it false.
// - 26.04, tag v0.4.0, scripts/performance/configs/qwen/
//   qwen3_workload_base_configs.py: QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_*
//   true; the B200 and B300 presets and QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_*
//   false; GB200 and GB300 leave it false.
bool QwenA2aOverlap(const std::string& release, const std::string& preset,
                    const std::string& gpu);

// Whether the release's DeepSeek-V3 performance preset for `gpu` overlaps
// the expert all-to-all (Megatron-Core's overlap_moe_expert_parallel_comm):
// - 25.09, tag v0.1.0rc4, scripts/performance/run_script.py: on H100
//   (A2A_1F1B) it sets comm_overlap.overlap_moe_expert_parallel_comm, on
//   B200 and GB200 it clears it.
// - 25.11, tag v0.2.0, configs/deepseek/workload_base_configs.py:
//   DEEPSEEK_V3_H100_BASE_CONFIG moe_a2a_overlap=True, the GB200, GB300 and
//   B200 presets False.
// - 26.04, configs/deepseek/deepseek_workload_base_configs.py: every preset
//   of tag v0.4.0 False; the B200 MXFP8 preset with ep 32 (commit 5acef9309,
//   "b200 DSv3 better cfg", in the 26.04.01 tag v0.4.2) True.
// Other releases: as 26.04.
bool DeepSeekA2aOverlap(const std::string& release, const std::string& gpu, int ep);

// Whether a GPT-OSS 120B row ran Megatron-Bridge 26.04's V2 preset
// (scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py,
// tags v0.4.0 to v0.4.2): V1 trains a global batch of 512, V2 one of 1280.
// The V2 presets dispatch with the flex dispatcher's HybridEP backend on
// GB200 and B200 (GPT_OSS_120B_PRETRAIN_CONFIG_{GB200,B200}_BF16_V2), and the
// GB200 one also sets moe_a2a_overlap; V1, the H100 presets and 25.11's
// (v0.2.0 configs/gpt_oss/workload_base_configs.py) set neither. Other
// releases: as 26.04.
bool GptOssV2Preset(const std::string& release, int global_batch);

// The flex-dispatcher backend of Megatron-Bridge's Qwen3 MoE performance
// presets, or "" for Megatron-Core's all-to-all dispatcher:
// - 25.09, tag v0.1.0rc4, scripts/performance/run_script.py: token drop
//   (apply_moe_token_drop), which asserts the all-to-all dispatcher.
// - 25.11, tag v0.2.0, scripts/performance/configs/qwen3/
//   workload_base_configs.py: QWEN3_{30B_A3B,235B_A22B}_GB200_* (and GB300)
//   set moe_flex_dispatcher_backend "hybridep"; the B200 and H100 presets
//   set none.
// - 26.04, tag v0.4.0, configs/qwen/qwen3_workload_base_configs.py:
//   QWEN3_30B_A3B_PRETRAIN_CONFIG_{GB200,B200,H100}_* (and B300, GB300)
//   "hybridep"; QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_* (V2 inherits V1's)
//   "hybridep", its B200 and H100 presets none.
std::string QwenDispatcher(const std::string& release, const std::string& preset,
                           const std::string& gpu);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_BRIDGE_PRESETS_H_
