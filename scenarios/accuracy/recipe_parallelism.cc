#include "scenarios/accuracy/recipe_parallelism.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/transformer_config.h"

namespace clustersim::scenarios {
namespace {

// `n` chunks: `first`, then `middle` layers in each of n - 2, then `last`.
std::vector<int> Chunks(int n, int first, int middle, int last) {
  std::vector<int> v(n, middle);
  v.front() = first;
  v.back() = last;
  return v;
}

// DeepSeek-V3's layout table (recipes/deepseek/deepseek_v3.py, the same at
// v0.1.0rc4, v0.2.0 and v0.4.0), keyed by (pp, vp); H100 pp 8 x vp 4 from the
// performance script's "Et|(tt|)*30mL" (scripts/performance, v0.1.0rc4
// run_script.py, v0.2.0 deepseek_llm_pretrain.py, v0.4.0
// deepseek_workload_base_configs.py).
std::vector<int> DeepSeekLayout(const std::string& gpu, int pp, int vp) {
  const std::pair<int, int> key{pp, vp};
  if (key == std::pair{4, 1}) return {16, 16, 16, 13};
  if (key == std::pair{8, 1} || key == std::pair{4, 2}) return Chunks(8, 8, 8, 5);
  if (key == std::pair{16, 1} || key == std::pair{8, 2} || key == std::pair{4, 4}) {
    return Chunks(16, 4, 4, 1);
  }
  if (key == std::pair{8, 4} && absl::StartsWith(gpu, "h100")) return Chunks(32, 1, 2, 0);
  return {};
}

// The Megatron-Bridge release of a row's stack cell ("nemo-25.11 (...)":
// "25.11"), or "".
std::string BridgeRelease(const std::string& stack) {
  for (const char* release : {"25.09", "25.11", "26.04"}) {
    if (absl::StrContains(stack, absl::StrCat("nemo-", release))) return release;
  }
  return "";
}

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
std::string DeepSeekDispatcher(const std::string& release, const std::string& gpu, int ep) {
  const bool h100 = absl::StartsWith(gpu, "h100"), gb200 = absl::StartsWith(gpu, "gb200");
  const bool b200 = absl::StartsWith(gpu, "b200");
  if (release == "25.09") return h100 ? "deepep" : "";
  if (release == "25.11") return gb200 ? "hybridep" : h100 ? "deepep" : "";
  if (release == "26.04" && b200 && ep == 32) return "deepep";
  return "hybridep";
}

// The recompute modules of Megatron-Bridge's DeepSeek-V3 performance presets,
// all with recompute_granularity "selective", by release and GPU:
// - 25.09, tag v0.1.0rc4, scripts/performance/run_script.py: H100
//   mla_up_proj + mlp; B200 mla_up_proj; GB200 mla_up_proj with token drop
//   (the presets drop tokens on Blackwell, as above), else mla_up_proj + mlp.
// - 25.11, tag v0.2.0, configs/deepseek/workload_base_configs.py (selective:
//   deepseek_llm_pretrain.py set_deepseek_v3_common_configs): GB200 and B200
//   mla_up_proj, H100 mla_up_proj + mlp.
// - 26.04, tag v0.4.0, configs/deepseek/deepseek_workload_base_configs.py:
//   GB200 FP8 (GB200_V1/V2) mlp; B200 mla_up_proj, with ep 32 (commit
//   5acef9309, FP8_MX_V2) mla_up_proj + mlp; H100 mla_up_proj + mlp.
// "mlp" replays only the dense MLP (DeepSeek-V3's first three layers).
std::vector<std::string> DeepSeekRecomputeModules(const std::string& release,
                                                  const std::string& gpu, int ep) {
  const bool h100 = absl::StartsWith(gpu, "h100"), gb200 = absl::StartsWith(gpu, "gb200");
  if (h100) return {"mla_up_proj", "mlp"};
  if (release == "26.04" || release.empty()) {
    if (gb200) return {"mlp"};
    if (ep == 32) return {"mla_up_proj", "mlp"};
  }
  return {"mla_up_proj"};
}

// The recompute modules of Megatron-Bridge's GPT-OSS 120B performance presets:
// - 25.09, tag v0.1.0rc4: no GPT-OSS preset.
// - 25.11, tag v0.2.0, configs/gpt_oss/workload_base_configs.py: GB200, B200
//   and H100 list recompute_modules ["layernorm", "moe_act"], but that
//   release's set_recompute_overrides (utils/helpers.py) sets only the list,
//   and neither the GPT-OSS recipe nor its provider sets a granularity;
//   Megatron-Core reads the list only under recompute_granularity "selective",
//   so nothing is replayed.
// - 26.04, tag v0.4.0, configs/gpt_oss/gpt_oss_workload_base_configs.py: the
//   same list on GB200, B200 and H100 (the V2 presets inherit V1's), and
//   _set_recompute_overrides (utils/overrides.py, commit c9dd05869, first
//   tagged v0.3.0) sets recompute_granularity "selective" with it.
// Other releases: as 26.04.
std::vector<std::string> GptOssRecomputeModules(const std::string& release,
                                                const std::string& gpu) {
  if (release == "25.09" || release == "25.11") return {};
  for (const char* g : {"gb200", "b200", "h100"}) {
    if (absl::StartsWith(gpu, g)) return {"layernorm", "moe_act"};
  }
  return {};
}

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
                                                int ep, std::string* name) {
  if (preset == "deepseek-v3-671b") {
    *name = "DeepSeek-V3";
    return DeepSeekRecomputeModules(release, gpu, ep);
  }
  if (preset == "gpt-oss-120b") {
    *name = "GPT-OSS";
    return GptOssRecomputeModules(release, gpu);
  }
  return {};
}

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
                               const std::string& gpu, const std::string& notes) {
  const bool preset_sets_it = release == "25.11" || release == "26.04";
  if (preset_sets_it && preset == "llama3-8b" && absl::StartsWith(gpu, "h100") &&
      absl::StrContains(notes, "FP8-CS")) {
    return 5;
  }
  return 0;
}

// account_for_embedding_ and account_for_loss_in_pipeline_split: the
// embedding and the loss count as a layer each, so every one of `chunks`
// chunks holds (layers + 2) / chunks layers and the first and last one fewer;
// nothing when that does not divide.
void CountEmbeddingAndLoss(int layers, int chunks, RecipeParallelism& r) {
  if ((layers + 2) % chunks != 0) return;
  const int per = (layers + 2) / chunks;
  r.layout = Chunks(chunks, per - 1, per, per - 1);
  absl::StrAppend(&r.text, r.text.empty() ? "" : "; ",
                  "embedding and loss each counted as a layer in the pipeline split (", per - 1,
                  " layers on the first and last chunk, ", per, " on the others)");
}

// NeMo 2's performance scripts as dgxc-benchmarking's 25.05 release runs them
// (support/25.05, c5c765f268): each workload's setup.sh checks out
// NVIDIA/NeMo at a pinned commit inside the nemo:25.04.01 image.
// - DeepSeek-V3 (deepseek_v3/pretraining, NeMo 7a8f1cc7bc):
//   scripts/performance/llm/pretrain_deepseek_v3.py gives the first stage
//   64/pp - 1 layers, the last 64/pp - 2 and the others 64/pp; the recipe
//   (recipes/deepseek_v3.py, pretrain_recipe(use_mtp=True)) trains one
//   multi-token-prediction module; launch.sh passes --recompute_modules
//   mla_up_proj on H100 and core_attn on GB200 (selective, applied by
//   scripts/performance/utils.py). The script also drops tokens
//   (MegatronTokenDropCallback: capacity 1.0, padded), which the simulator
//   does not model: its all-to-all dispatcher stays dropless.
// - Llama 3.1 405B (llama3.1, NeMo 6f2c6fdaff): recipes/llama31_405b.py's
//   trainer() sets account_for_embedding_ and account_for_loss_in_pipeline_split.
// - Llama 4 Maverick (llama4, NeMo 7a8f1cc7bc): launch.sh runs
//   scripts/performance/llm/pretrain_llama4_e128.py with VP=1 on H100 (the
//   README's table lists VP 12 there, which Megatron cannot interleave
//   without a pipeline) and VP=12 on GB200; no recompute flag, and
//   recommended_model_configs/model_configs_{gb200,h100}.csv give
//   recompute_layers 0 and no recompute_modules; the model
//   (gpt/model/llama.py Llama4Config) dispatches tokens all-to-all
//   (moe_token_dispatcher_type "alltoall"); recipes/llama4_e128.py's
//   MegatronTokenDropCallback caps each expert at capacity 1.0 with padding,
//   which is the balanced top-1 load the simulator costs.
// - Nemotron-H 56B (nemotronh, NeMo 7a8f1cc7bc): launch.sh runs
//   scripts/performance/llm/pretrain_nemotronh_56b.py with TP 8, PP 1, MBS 1
//   and no --fp8_recipe. The script calls pretrain_recipe() without
//   performance_mode, so recipes/nemotronh_56b.py's performance_optimizations
//   (the MegatronCommOverlapCallback with tp_comm_overlap=True) never runs:
//   no TP communication overlap, and the trainer's DDP config keeps
//   overlap_param_gather=False. set_primary_perf_configs (scripts/performance/
//   utils.py) turns sequence parallelism on (tp > 1), sets no recompute, and
//   replaces the recipe's FP8 current-scaling plugin with the argument
//   parser's default fp8_recipe "ds": bf16_with_fp8_mixed, delayed scaling
//   in every layer.
// - DeepSeek-V3 (pretrain_deepseek_v3.py): the script appends
//   MegatronCommOverlapCallback(tp_comm_overlap=False); recipes/deepseek.py's
//   DDP config overlaps the parameter gather.
void Nemo2504Recipe(const std::string& preset, const std::string& gpu, const std::string& notes,
                    int layers, int pp, int vp, RecipeParallelism& r) {
  auto append = [&r](const std::string& text) {
    absl::StrAppend(&r.text, r.text.empty() ? "" : "; ", text);
  };
  const int chunks = pp * vp;
  if (preset == "deepseek-v3-671b") {
    r.no_tp_comm_overlap = true;
    append("no TP communication overlap (pretrain_deepseek_v3.py: tp_comm_overlap=False)");
    const bool h100 = absl::StartsWith(gpu, "h100"), gb200 = absl::StartsWith(gpu, "gb200");
    if (h100 || gb200) {
      r.recompute_modules = {h100 ? "mla_up_proj" : "core_attn"};
      append(absl::StrCat("selective recompute of ", r.recompute_modules.front(),
                          " (dgxc-benchmarking 25.05 launch.sh)"));
    }
    r.mtp_num_layers = absl::StrContains(notes, "without multi-token prediction") ? 0 : 1;
    append(r.mtp_num_layers > 0 ? "one multi-token-prediction module (the recipe's default)"
                                : "no multi-token prediction (stated)");
    if (layers == 61 && vp == 1 && pp >= 2 && 64 % pp == 0) {
      const int middle = 64 / pp;
      r.layout = Chunks(pp, middle - 1, middle, middle - 2);
      append(absl::StrCat("NeMo's DeepSeek-V3 pipeline split (", middle - 1,
                          " layers on the first stage, ", middle - 2, " on the last, ", middle,
                          " on the others)"));
    }
    append("dropless token dispatch (the script's token drop is not modelled)");
    return;
  }
  if (preset == "llama3.1-405b" && chunks >= 2) CountEmbeddingAndLoss(layers, chunks, r);
  if (preset == "nemotron-h-56b") {
    r.no_tp_comm_overlap = true;
    r.no_param_gather_overlap = true;
    append("no recompute, sequence parallel, no TP communication overlap and no overlapped "
           "parameter gather, FP8 delayed scaling (pretrain_nemotronh_56b.py: the "
           "nemotronh_56b recipe without performance_mode, the script's default fp8_recipe)");
  }
  if (preset == "llama4-maverick-400b") {
    if (pp == 1 && vp > 1) {
      r.virtual_pipeline = 1;
      append("no interleaving (dgxc-benchmarking 25.05 llama4 launch.sh: VP=1 on H100)");
    }
    append("all-to-all token dispatch and no recompute (NeMo's llama4_e128 performance recipe); "
           "its token drop at capacity 1.0 equals the balanced load");
  }
}

// Nemotron 3 Nano's Megatron-Bridge 26.04 performance presets (tag v0.4.0,
// scripts/performance/configs/nemotronh/nemotron_3_workload_base_configs.py):
// BASE_NEMOTRON_3_NANO_CONFIG dispatches with the flex dispatcher's HybridEP
// backend and sets no recompute, which the GB200 and B200 presets keep (micro
// batch 2); the H100 presets recompute the module "moe" (the whole MoE layer:
// FP8-CS with "layernorm", "core_attn" and "moe_act", BF16 with "layernorm"),
// which the simulator does not model. CUDA graphs of the attention, Mamba and
// router parts are not modelled either.
void NemotronNanoRecipe(const std::string& release, const std::string& gpu,
                        RecipeParallelism& r) {
  if (release != "26.04") {
    r.missing = "the Nemotron 3 Nano performance preset of this release is not pinned here";
    return;
  }
  if (absl::StartsWith(gpu, "h100")) {
    r.missing =
        "the Nemotron 3 Nano H100 performance preset recomputes the whole MoE layer (recompute "
        "module \"moe\"), which is not modelled";
    return;
  }
  r.moe_dispatcher = "hybridep";
  absl::StrAppend(&r.text, r.text.empty() ? "" : "; ",
                  "HybridEP token dispatch and no recompute (the Nemotron 3 Nano performance "
                  "preset's); its CUDA graphs are not modelled");
}

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
                    const std::string& gpu) {
  const bool h100 = absl::StartsWith(gpu, "h100"), b200 = absl::StartsWith(gpu, "b200");
  if (release == "25.11") {
    return (preset == "qwen3-235b-a22b" && (h100 || b200)) ||
           (preset == "qwen3-30b-a3b" && h100);
  }
  return release == "26.04" && preset == "qwen3-235b-a22b" && h100;
}

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
bool DeepSeekA2aOverlap(const std::string& release, const std::string& gpu, int ep) {
  if (release == "25.09" || release == "25.11") return absl::StartsWith(gpu, "h100");
  return absl::StartsWith(gpu, "b200") && ep == 32;
}

// Whether a GPT-OSS 120B row ran Megatron-Bridge 26.04's V2 preset
// (scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py,
// tags v0.4.0 to v0.4.2): V1 trains a global batch of 512, V2 one of 1280.
// The V2 presets dispatch with the flex dispatcher's HybridEP backend on
// GB200 and B200 (GPT_OSS_120B_PRETRAIN_CONFIG_{GB200,B200}_BF16_V2), and the
// GB200 one also sets moe_a2a_overlap; V1, the H100 presets and 25.11's
// (v0.2.0 configs/gpt_oss/workload_base_configs.py) set neither. Other
// releases: as 26.04.
bool GptOssV2Preset(const std::string& release, int global_batch) {
  return release != "25.09" && release != "25.11" && global_batch == 1280;
}

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
                           const std::string& gpu) {
  const bool gb200 = absl::StartsWith(gpu, "gb200");
  if (release == "25.11") return gb200 ? "hybridep" : "";
  if (release != "26.04") return "";
  if (preset == "qwen3-30b-a3b") {
    for (const char* g : {"gb200", "b200", "h100"}) {
      if (absl::StartsWith(gpu, g)) return "hybridep";
    }
    return "";
  }
  return gb200 ? "hybridep" : "";
}

}  // namespace

int NvlinkDomainGpus(const std::string& stack, const std::string& gpu, int num_gpus) {
  if (!absl::StrContains(absl::AsciiStrToLower(stack), "megatron-bridge") ||
      !absl::StartsWith(gpu, "gb200") || num_gpus % 4 != 0) {
    return 0;
  }
  const int trays = num_gpus / 4;
  if (trays <= 18) return num_gpus;
  for (int segment = 18; segment > 0; --segment) {
    if (trays % segment == 0) return 4 * segment;
  }
  return 0;
}

int BridgeCpuOffloadLayers(const std::string& stack, const std::string& preset,
                           const std::string& gpu, const std::string& precision,
                           const std::string& fp8_recipe, int pp) {
  if (!absl::StrContains(absl::AsciiStrToLower(stack), "megatron-bridge") ||
      !absl::StartsWith(gpu, "gb200") || pp != 1) {
    return 0;
  }
  const std::string release = BridgeRelease(stack);
  if (release.empty()) return 0;
  const bool bf16 = precision == "bf16";
  const bool fp8_cs = precision == "fp8" && fp8_recipe == "current";
  if (preset == "llama3-70b") return bf16 ? 20 : fp8_cs ? 40 : 0;
  if (preset == "llama3.1-405b" && precision == "fp8" && fp8_recipe != "mxfp8") {
    if (release == "25.09") return 95;
    return fp8_cs ? 92 : 0;
  }
  return 0;
}

RecipeParallelism ForRecipe(const std::string& stack, const std::string& notes,
                            const std::string& preset, const std::string& gpu, int layers, int pp,
                            int vp, int ep, int global_batch) {
  RecipeParallelism r;
  const bool bridge = absl::StrContains(absl::AsciiStrToLower(stack), "megatron-bridge");
  int experts = 0;
  if (!preset.empty()) {
    if (auto m = models::ModelCatalog::Default().Find(preset); m.ok()) experts = m->num_experts;
  }
  const int chunks = pp * vp;
  if (bridge && experts > 0) {
    r.expert_tensor_parallel = 1;
    r.text = "expert tensor parallel 1 (Megatron-Bridge MoE recipes: parallel folding)";
  } else if (experts > 0 && absl::StrContains(notes, "ETP1")) {
    r.expert_tensor_parallel = 1;
    r.text = "expert tensor parallel 1 (stated: ETP1)";
  }
  auto append = [&r](const std::string& text) {
    absl::StrAppend(&r.text, r.text.empty() ? "" : "; ", text);
  };
  if (bridge) {
    std::string name;
    r.recompute_modules = BridgeRecomputeModules(BridgeRelease(stack), preset, gpu, ep, &name);
    if (!r.recompute_modules.empty()) {
      append(absl::StrCat("selective recompute of ", absl::StrJoin(r.recompute_modules, " and "),
                          " (the ", name, " performance preset's recompute_modules)"));
    }
    r.recompute_block_layers = BridgeRecomputeBlockLayers(BridgeRelease(stack), preset, gpu, notes);
    if (r.recompute_block_layers > 0) {
      append(absl::StrCat("full recompute of the first ", r.recompute_block_layers,
                          " layers of each model chunk (the performance preset's "
                          "recompute_num_layers, method block)"));
    }
  }
  // Megatron-Core refuses the overlap without expert parallelism, with
  // pp > 1 and no interleaving, or with full recompute.
  const bool qwen_overlap = QwenA2aOverlap(BridgeRelease(stack), preset, gpu);
  const bool deepseek_overlap =
      preset == "deepseek-v3-671b" && DeepSeekA2aOverlap(BridgeRelease(stack), gpu, ep);
  const bool gpt_oss_v2 =
      preset == "gpt-oss-120b" && GptOssV2Preset(BridgeRelease(stack), global_batch);
  const bool gpt_oss_overlap = gpt_oss_v2 && absl::StartsWith(gpu, "gb200");
  if (bridge && (qwen_overlap || deepseek_overlap || gpt_oss_overlap) && ep > 1 &&
      (pp == 1 || vp > 1) && r.recompute_block_layers == 0) {
    r.moe_a2a_overlap = true;
    append(absl::StrCat("MoE all-to-all overlap (the ",
                        qwen_overlap ? "Qwen3" : deepseek_overlap ? "DeepSeek-V3" : "GPT-OSS 120B",
                        " performance preset's moe_a2a_overlap)"));
  }
  if (bridge && preset == "deepseek-v3-671b") {
    r.moe_dispatcher = DeepSeekDispatcher(BridgeRelease(stack), gpu, ep);
    append(r.moe_dispatcher.empty()
               ? std::string("all-to-all token dispatch (the DeepSeek-V3 performance preset's)")
               : absl::StrCat(r.moe_dispatcher == "deepep" ? "DeepEP" : "HybridEP",
                              " token dispatch (the DeepSeek-V3 performance preset's flex "
                              "dispatcher)"));
  } else if (bridge && (preset == "qwen3-30b-a3b" || preset == "qwen3-235b-a22b")) {
    r.moe_dispatcher = QwenDispatcher(BridgeRelease(stack), preset, gpu);
    if (!r.moe_dispatcher.empty()) {
      append("HybridEP token dispatch (the Qwen3 performance preset's flex dispatcher)");
    }
  } else if (bridge && gpt_oss_v2 &&
             (absl::StartsWith(gpu, "gb200") || absl::StartsWith(gpu, "b200"))) {
    r.moe_dispatcher = "hybridep";
    append("HybridEP token dispatch (the GPT-OSS 120B V2 performance preset's flex dispatcher)");
  } else if (bridge && preset == "nemotron-3-nano-30b-a3b") {
    NemotronNanoRecipe(BridgeRelease(stack), gpu, r);
  } else if (experts > 0 && absl::StrContains(notes, "DeepEP")) {
    r.moe_dispatcher = "deepep";
    append("DeepEP token dispatch (stated)");
  }
  if (absl::StartsWith(absl::AsciiStrToLower(stack), "nemo-25.04")) {
    Nemo2504Recipe(preset, gpu, notes, layers, pp, vp, r);
    return r;
  }
  if (!bridge || chunks < 2) return r;
  if (preset == "deepseek-v3-671b") {
    r.layout = DeepSeekLayout(gpu, pp, vp);
    if (r.layout.empty()) {
      if (layers % chunks != 0) {
        r.missing = absl::StrCat(
            "the Megatron-Bridge DeepSeek-V3 recipe states no pipeline layout "
            "for pp ",
            pp, " x vp ", vp, ", and ", layers, " layers do not split evenly over ", chunks,
            " chunks");
      }
      return r;
    }
    r.mtp_num_layers = absl::StrContains(notes, "without multi-token prediction") ? 0 : 1;
    append(absl::StrCat("pipeline layout of the DeepSeek-V3 recipe (", r.layout.front(),
                        " layers on the first chunk, ", r.layout.back(), " on the last)"));
    append(r.mtp_num_layers > 0 ? "one multi-token-prediction module (the recipe's default)"
                                : "no multi-token prediction (stated)");
    return r;
  }
  if (preset == "llama3.1-405b" || preset == "qwen3-235b-a22b") {
    CountEmbeddingAndLoss(layers, chunks, r);
  }
  return r;
}

}  // namespace clustersim::scenarios
