#include "scenarios/accuracy/recipe_parallelism.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/transformer_config.h"
#include "scenarios/accuracy/bridge_presets.h"

namespace clustersim::scenarios {
namespace {

// account_for_embedding_ and account_for_loss_in_pipeline_split: the
// embedding and the loss count as a layer each, so every one of `chunks`
// chunks holds (layers + 2) / chunks layers and the first and last one fewer;
// nothing when that does not divide.
void CountEmbeddingAndLoss(int layers, int chunks, RecipeParallelism& r) {
  if ((layers + 2) % chunks != 0) return;
  const int per = (layers + 2) / chunks;
  r.layout = ChunkLayers(chunks, per - 1, per, per - 1);
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
      r.layout = ChunkLayers(pp, middle - 1, middle, middle - 2);
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

}  // namespace

int NvlinkDomainGpus(const std::string& stack, const std::string& gpu, int num_gpus) {
  const std::string lower = absl::AsciiStrToLower(stack);
  const bool segment_launcher =
      absl::StrContains(lower, "megatron-bridge") || absl::StartsWith(lower, "nemo-25.04");
  if (!segment_launcher || !absl::StartsWith(gpu, "gb200") || num_gpus % 4 != 0) {
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
