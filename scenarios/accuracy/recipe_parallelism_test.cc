#include "scenarios/accuracy/recipe_parallelism.h"

#include <numeric>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kBridge = "nemo-25.11 (Megatron-Bridge + Megatron-Core)";

int Sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(RecipeParallelismTest, DeepSeekTakesTheRecipesLayoutTable) {
  // 16 chunks: the first holds 4 layers (with the embedding), the last 1.
  RecipeParallelism r = ForRecipe(kBridge, "", "deepseek-v3-671b", "gb200-186gb", 61, 4, 4);
  ASSERT_EQ(r.layout.size(), 16u);
  EXPECT_EQ(r.layout.front(), 4);
  EXPECT_EQ(r.layout.back(), 1);
  EXPECT_EQ(Sum(r.layout), 61);
  EXPECT_EQ(r.expert_tensor_parallel, 1);
  EXPECT_EQ(r.mtp_num_layers, 1);
  EXPECT_EQ(ForRecipe(kBridge, "archive footnote: without multi-token prediction layer",
                      "deepseek-v3-671b", "gb200-186gb", 61, 4, 4)
                .mtp_num_layers,
            0);
  // The same table for pp 16 (vp 1) and pp 8 x vp 2; 4 stages without interleaving.
  EXPECT_EQ(ForRecipe(kBridge, "", "deepseek-v3-671b", "b200-sxm-180gb", 61, 16, 1).layout,
            r.layout);
  EXPECT_EQ(ForRecipe(kBridge, "", "deepseek-v3-671b", "b200-sxm-180gb", 61, 8, 2).layout,
            r.layout);
  EXPECT_THAT(ForRecipe(kBridge, "", "deepseek-v3-671b", "gb200-186gb", 61, 4, 1).layout,
              ElementsAre(16, 16, 16, 13));
}

TEST(RecipeParallelismTest, DeepSeekOnH100UsesTheScriptsLayoutAndOtherwiseSaysWhy) {
  const std::vector<int> h100 =
      ForRecipe(kBridge, "", "deepseek-v3-671b", "h100-sxm5-80gb", 61, 8, 4).layout;
  ASSERT_EQ(h100.size(), 32u);
  EXPECT_EQ(h100.front(), 1);
  EXPECT_EQ(h100[1], 2);
  EXPECT_EQ(h100.back(), 0);  // the output layer and MTP only
  EXPECT_EQ(Sum(h100), 61);
  // GB200 at pp 8 x vp 4: the recipe has no layout, 61 layers do not split.
  const RecipeParallelism gb = ForRecipe(kBridge, "", "deepseek-v3-671b", "gb200-186gb", 61, 8, 4);
  EXPECT_TRUE(gb.layout.empty());
  EXPECT_THAT(gb.missing, HasSubstr("states no pipeline layout for pp 8 x vp 4"));
}

TEST(RecipeParallelismTest, EmbeddingAndLossCountAsLayersFor405BAndQwen235B) {
  // (126 + 2) / 64 = 2 per chunk; the first and last hold 1.
  const std::vector<int> llama =
      ForRecipe(kBridge, "", "llama3.1-405b", "gb200-186gb", 126, 8, 8).layout;
  ASSERT_EQ(llama.size(), 64u);
  EXPECT_EQ(llama.front(), 1);
  EXPECT_EQ(llama[1], 2);
  EXPECT_EQ(llama.back(), 1);
  EXPECT_EQ(Sum(llama), 126);
  // (94 + 2) / 16 = 6: [5, 6 x 14, 5], as Megatron-Bridge's own pipeline test has it.
  const std::vector<int> qwen =
      ForRecipe(kBridge, "", "qwen3-235b-a22b", "b200-sxm-180gb", 94, 8, 2).layout;
  ASSERT_EQ(qwen.size(), 16u);
  EXPECT_EQ(qwen.front(), 5);
  EXPECT_EQ(qwen[7], 6);
  EXPECT_EQ(qwen.back(), 5);
  // A dense Llama is not folded and keeps its split.
  const RecipeParallelism dense = ForRecipe(kBridge, "", "llama3-70b", "gb200-186gb", 80, 4, 5);
  EXPECT_TRUE(dense.layout.empty());
  EXPECT_EQ(dense.expert_tensor_parallel, 0);
}

TEST(RecipeParallelismTest, NeMo2504ScriptsSplitDeepSeekAnd405B) {
  constexpr const char* kDgxc = "nemo-25.04 (dgxc-benchmarking 25.05 release)";
  // pretrain_deepseek_v3.py: 64/pp per middle stage, one and two fewer at the ends.
  const RecipeParallelism h100 =
      ForRecipe(kDgxc, "TP2 PP16 EP64 ETP1", "deepseek-v3-671b", "h100-sxm5-80gb", 61, 16, 1, 64);
  EXPECT_THAT(h100.layout, ElementsAre(3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2));
  EXPECT_EQ(h100.mtp_num_layers, 1);
  EXPECT_THAT(h100.recompute_modules, ElementsAre("mla_up_proj"));
  EXPECT_EQ(h100.expert_tensor_parallel, 1);
  EXPECT_TRUE(h100.moe_dispatcher.empty());
  const RecipeParallelism gb =
      ForRecipe(kDgxc, "", "deepseek-v3-671b", "gb200-186gb", 61, 4, 1, 32);
  EXPECT_THAT(gb.layout, ElementsAre(15, 16, 16, 14));
  EXPECT_THAT(gb.recompute_modules, ElementsAre("core_attn"));
  EXPECT_THAT(gb.text, HasSubstr("token drop is not modelled"));
  EXPECT_EQ(Sum(ForRecipe(kDgxc, "", "deepseek-v3-671b", "h100-sxm5-80gb", 61, 8, 1).layout), 61);
  // recipes/llama31_405b.py: the embedding and the loss count as layers.
  const std::vector<int> llama = ForRecipe("nemo-25.04.01 (setup imports nvcr.io/nvidia/nemo:25.04.01)",
                                           "", "llama3.1-405b", "h100-sxm5-80gb", 126, 8, 8)
                                     .layout;
  ASSERT_EQ(llama.size(), 64u);
  EXPECT_EQ(llama.front(), 1);
  EXPECT_EQ(llama[1], 2);
  EXPECT_EQ(Sum(llama), 126);
  // Other models of the release keep their own split.
  EXPECT_TRUE(ForRecipe(kDgxc, "", "llama3-70b", "h100-sxm5-80gb", 80, 4, 5).layout.empty());
}

// pretrain_nemotronh_56b.py builds the recipe without performance_mode (no
// MegatronCommOverlapCallback; the DDP config's overlap_param_gather=False);
// pretrain_deepseek_v3.py adds the callback with tp_comm_overlap=False.
// Llama 4's script runs performance_mode and keeps the stack's overlaps.
TEST(RecipeParallelismTest, NeMo2504ScriptsThatLeaveTheOverlapsOff) {
  constexpr const char* kDgxc = "nemo-25.04 (dgxc-benchmarking 25.05 release)";
  const RecipeParallelism h = ForRecipe(kDgxc, "", "nemotron-h-56b", "h100-sxm5-80gb", 118, 1, 1);
  EXPECT_TRUE(h.no_tp_comm_overlap);
  EXPECT_TRUE(h.no_param_gather_overlap);
  EXPECT_TRUE(h.recompute_modules.empty());
  EXPECT_THAT(h.text, HasSubstr("FP8 delayed scaling"));
  const RecipeParallelism ds = ForRecipe(kDgxc, "", "deepseek-v3-671b", "gb200-186gb", 61, 4, 1, 32);
  EXPECT_TRUE(ds.no_tp_comm_overlap);
  EXPECT_FALSE(ds.no_param_gather_overlap);
  const RecipeParallelism maverick =
      ForRecipe(kDgxc, "", "llama4-maverick-400b", "gb200-186gb", 48, 2, 12, 64);
  EXPECT_FALSE(maverick.no_tp_comm_overlap);
  EXPECT_FALSE(maverick.no_param_gather_overlap);
  // Megatron-Bridge's presets keep the stack's overlaps.
  EXPECT_FALSE(ForRecipe(kBridge, "", "deepseek-v3-671b", "gb200-186gb", 61, 4, 4).no_tp_comm_overlap);
}

// Llama 4 Maverick (pretrain_llama4_e128.py): launch.sh's VP=1 on H100 (pp 1)
// replaces the README's VP 12; GB200 keeps pp 2 x vp 12 and its even split;
// the stated ETP1 folds the experts.
TEST(RecipeParallelismTest, NeMo2504Llama4RunsH100WithoutInterleaving) {
  constexpr const char* kDgxc = "nemo-25.04 (dgxc-benchmarking 25.05 release)";
  const RecipeParallelism h100 = ForRecipe(kDgxc, "TP4 PP1 CP1 EP128 ETP4 DP128 VP12",
                                           "llama4-maverick-400b", "h100-sxm5-80gb", 48, 1, 12, 128);
  EXPECT_EQ(h100.virtual_pipeline, 1);
  EXPECT_EQ(h100.expert_tensor_parallel, 0);  // ETP4 = tp
  EXPECT_TRUE(h100.layout.empty());
  EXPECT_TRUE(h100.recompute_modules.empty());
  EXPECT_THAT(h100.text, HasSubstr("VP=1 on H100"));
  const RecipeParallelism gb = ForRecipe(kDgxc, "TP1 PP2 CP1 EP64 ETP1 VP12",
                                         "llama4-maverick-400b", "gb200-186gb", 48, 2, 12, 64);
  EXPECT_EQ(gb.virtual_pipeline, 0);
  EXPECT_EQ(gb.expert_tensor_parallel, 1);
  EXPECT_TRUE(gb.layout.empty());
  EXPECT_THAT(gb.text, HasSubstr("all-to-all token dispatch and no recompute"));
}

TEST(RecipeParallelismTest, GB200JobsGetTheLaunchersSegments) {
  EXPECT_EQ(NvlinkDomainGpus(kBridge, "gb200-186gb", 256), 64);  // 64 trays: segment 16
  EXPECT_EQ(NvlinkDomainGpus(kBridge, "gb200-186gb", 128), 64);
  EXPECT_EQ(NvlinkDomainGpus(kBridge, "gb200-186gb", 64), 64);  // one rack
  EXPECT_EQ(NvlinkDomainGpus(kBridge, "gb200-186gb", 8), 8);
  EXPECT_EQ(NvlinkDomainGpus(kBridge, "gb200-186gb", 288), 72);  // 72 trays: segment 18
  EXPECT_EQ(NvlinkDomainGpus(kBridge, "b200-sxm-180gb", 256), 0);
  // NeMo 25.04's scripts/performance launcher (dgxc-benchmarking 25.05) asks
  // for the same segments; other stacks state none.
  EXPECT_EQ(NvlinkDomainGpus("nemo-25.04 (dgxc-benchmarking 25.05 release)", "gb200-186gb", 128),
            64);
  EXPECT_EQ(NvlinkDomainGpus("nemo-25.04.01 (setup imports nvcr.io/nvidia/nemo:25.04.01)",
                             "gb200-186gb", 512),
            64);
  EXPECT_EQ(NvlinkDomainGpus("megatron-core", "gb200-186gb", 256), 0);
  EXPECT_EQ(NvlinkDomainGpus("nemo-24.09", "gb200-186gb", 256), 0);
}

TEST(RecipeParallelismTest, OtherStacksFoldOnlyWhereTheNotesSayETP1) {
  const std::string nemo = "nemo-25.04 (dgxc-benchmarking 25.05 release)";
  EXPECT_EQ(ForRecipe(nemo, "TP2 PP4 CP1 ETP1 MBS1", "deepseek-v3-671b", "gb200-186gb", 61, 4, 1)
                .expert_tensor_parallel,
            1);
  const RecipeParallelism silent =
      ForRecipe(nemo, "TP4 PP1", "grok-1-314b", "gb200-186gb", 64, 1, 1);
  EXPECT_EQ(silent.expert_tensor_parallel, 0);
  EXPECT_TRUE(silent.layout.empty());
  // Neither a Megatron-Bridge recipe nor a NeMo script with a stated split.
  EXPECT_TRUE(ForRecipe("nemo-24.11 (NeMo Megatron launcher)", "", "deepseek-v3-671b",
                        "gb200-186gb", 61, 4, 1)
                  .layout.empty());
}

// Megatron-Bridge's DeepSeek-V3 presets choose the dispatcher by release and
// GPU (25.11: HybridEP on GB200, the all-to-all dispatcher on B200); its 25.11
// Qwen3 H100 rows keep the all-to-all dispatcher; other stacks dispatch with
// DeepEP only where the notes name it; dense models never.
TEST(RecipeParallelismTest, DispatcherFollowsTheRecipeOrTheNotes) {
  EXPECT_EQ(ForRecipe(kBridge, "", "deepseek-v3-671b", "gb200-186gb", 61, 4, 4, 64).moe_dispatcher,
            "hybridep");
  EXPECT_EQ(ForRecipe(kBridge, "", "deepseek-v3-671b", "b200-sxm-180gb", 61, 16, 1, 8)
                .moe_dispatcher,
            "");
  EXPECT_EQ(ForRecipe(kBridge, "", "qwen3-235b-a22b", "h100-sxm5-80gb", 94, 8, 4, 32)
                .moe_dispatcher,
            "");
  EXPECT_EQ(ForRecipe("nemo-automodel 25.11", "kernel optimizations 'TE + DeepEP + TorchSDPA'",
                      "qwen3-30b-a3b", "h100-sxm5-80gb", 48, 1, 1)
                .moe_dispatcher,
            "deepep");
  EXPECT_EQ(ForRecipe("nemo-automodel 25.11", "TE + DeepEP", "llama3.1-8b", "h100-sxm5-80gb", 32,
                      1, 1)
                .moe_dispatcher,
            "");
}

// The DeepSeek-V3 presets' dispatcher changes with the release: 25.09 drops
// tokens with the all-to-all dispatcher on Blackwell and uses DeepEP on H100;
// 26.04's B200 preset with ep 32 uses DeepEP, the others HybridEP.
TEST(RecipeParallelismTest, DeepSeekDispatcherFollowsTheRelease) {
  const std::string r2509 = "nemo-25.09 (Megatron-Bridge + Megatron-Core)";
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  auto dispatcher = [](const std::string& stack, const std::string& gpu, int pp, int vp, int ep) {
    return ForRecipe(stack, "", "deepseek-v3-671b", gpu, 61, pp, vp, ep).moe_dispatcher;
  };
  EXPECT_EQ(dispatcher(r2509, "h100-sxm5-80gb", 8, 4, 64), "deepep");
  EXPECT_EQ(dispatcher(r2509, "b200-sxm-180gb", 16, 1, 8), "");
  EXPECT_EQ(dispatcher(r2509, "gb200-186gb", 4, 4, 64), "");
  EXPECT_EQ(dispatcher(kBridge, "h100-sxm5-80gb", 8, 4, 64), "deepep");
  EXPECT_EQ(dispatcher(r2604, "b200-sxm-180gb", 8, 2, 32), "deepep");
  EXPECT_EQ(dispatcher(r2604, "b200-sxm-180gb", 16, 1, 8), "hybridep");
  EXPECT_EQ(dispatcher(r2604, "gb200-186gb", 4, 4, 64), "hybridep");
  // Not a Megatron-Bridge stack: no dispatcher assumed.
  EXPECT_EQ(ForRecipe("nemo-25.04 (dgxc-benchmarking)", "", "deepseek-v3-671b", "h100-sxm5-80gb",
                      61, 8, 1, 64)
                .moe_dispatcher,
            "");
}

// The Qwen3 presets' HybridEP follows the release, model and GPU: none in
// 25.09 (token drop needs the all-to-all dispatcher), GB200 only in 25.11,
// Qwen3-30B-A3B on GB200, B200 and H100 and Qwen3-235B-A22B on GB200 in 26.04.
TEST(RecipeParallelismTest, QwenDispatcherFollowsTheReleaseModelAndGpu) {
  const std::string r2509 = "nemo-25.09 (Megatron-Bridge + Megatron-Core)";
  const std::string r2511 = "nemo-25.11 (Megatron-Bridge + Megatron-Core)";
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  auto dispatcher = [](const std::string& stack, const std::string& preset,
                       const std::string& gpu) {
    const int layers = preset == "qwen3-30b-a3b" ? 48 : 94;
    return ForRecipe(stack, "", preset, gpu, layers, 1, 1, 8).moe_dispatcher;
  };
  EXPECT_EQ(dispatcher(r2509, "qwen3-30b-a3b", "gb200-186gb"), "");
  EXPECT_EQ(dispatcher(r2511, "qwen3-30b-a3b", "gb200-186gb"), "hybridep");
  EXPECT_EQ(dispatcher(r2511, "qwen3-30b-a3b", "b200-sxm-180gb"), "");
  EXPECT_EQ(dispatcher(r2511, "qwen3-235b-a22b", "gb200-186gb"), "hybridep");
  for (const char* gpu : {"gb200-186gb", "b200-sxm-180gb", "h100-sxm5-80gb"}) {
    EXPECT_EQ(dispatcher(r2604, "qwen3-30b-a3b", gpu), "hybridep") << gpu;
  }
  EXPECT_EQ(dispatcher(r2604, "qwen3-235b-a22b", "gb200-186gb"), "hybridep");
  EXPECT_EQ(dispatcher(r2604, "qwen3-235b-a22b", "b200-sxm-180gb"), "");
  EXPECT_EQ(dispatcher(r2604, "qwen3-235b-a22b", "h100-sxm5-80gb"), "");
  // Not a Megatron-Bridge stack: none assumed.
  EXPECT_EQ(dispatcher("nemo-25.04 (dgxc-benchmarking)", "qwen3-30b-a3b", "gb200-186gb"), "");
}

TEST(RecipeParallelismTest, DeepSeekRecomputeModulesFollowTheReleaseAndGpu) {
  const std::string r2509 = "nemo-25.09 (Megatron-Bridge + Megatron-Core)";
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  auto modules = [](const std::string& stack, const std::string& gpu, int pp, int vp, int ep) {
    return ForRecipe(stack, "", "deepseek-v3-671b", gpu, 61, pp, vp, ep).recompute_modules;
  };
  EXPECT_THAT(modules(r2509, "h100-sxm5-80gb", 8, 4, 64), ElementsAre("mla_up_proj", "mlp"));
  EXPECT_THAT(modules(r2509, "b200-sxm-180gb", 16, 1, 8), ElementsAre("mla_up_proj"));
  EXPECT_THAT(modules(r2509, "gb200-186gb", 4, 4, 64), ElementsAre("mla_up_proj"));
  EXPECT_THAT(modules(kBridge, "b200-sxm-180gb", 16, 1, 8), ElementsAre("mla_up_proj"));
  EXPECT_THAT(modules(kBridge, "gb200-186gb", 4, 4, 64), ElementsAre("mla_up_proj"));
  EXPECT_THAT(modules(r2604, "gb200-186gb", 4, 4, 64), ElementsAre("mlp"));
  EXPECT_THAT(modules(r2604, "b200-sxm-180gb", 8, 2, 32), ElementsAre("mla_up_proj", "mlp"));
  EXPECT_THAT(modules(r2604, "b200-sxm-180gb", 16, 1, 8), ElementsAre("mla_up_proj"));
  EXPECT_THAT(ForRecipe(kBridge, "", "deepseek-v3-671b", "b200-sxm-180gb", 61, 16, 1, 8).text,
              HasSubstr("selective recompute of mla_up_proj"));
  // Other stacks: none assumed.
  EXPECT_TRUE(ForRecipe("nemo-24.11 (NeMo Megatron launcher)", "", "deepseek-v3-671b",
                        "h100-sxm5-80gb", 61, 8, 1, 64)
                  .recompute_modules.empty());
}

TEST(RecipeParallelismTest, GptOssRecomputesFrom2604AndOtherPresetsNothing) {
  const std::string r2509 = "nemo-25.09 (Megatron-Bridge + Megatron-Core)";
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  auto modules = [](const std::string& stack, const std::string& preset, const std::string& gpu,
                    int layers, int pp, int ep) {
    return ForRecipe(stack, "", preset, gpu, layers, pp, 1, ep).recompute_modules;
  };
  // 26.04: layernorm and moe_act on GB200, B200 and H100.
  EXPECT_THAT(modules(r2604, "gpt-oss-120b", "gb200-186gb", 36, 1, 64),
              ElementsAre("layernorm", "moe_act"));
  EXPECT_THAT(modules(r2604, "gpt-oss-120b", "b200-sxm-180gb", 36, 1, 8),
              ElementsAre("layernorm", "moe_act"));
  EXPECT_THAT(modules(r2604, "gpt-oss-120b", "h100-sxm5-80gb", 36, 4, 8),
              ElementsAre("layernorm", "moe_act"));
  EXPECT_THAT(ForRecipe(r2604, "", "gpt-oss-120b", "gb200-186gb", 36, 1, 1, 64).text,
              HasSubstr("selective recompute of layernorm and moe_act (the GPT-OSS"));
  // 25.11: the list without a selective granularity replays nothing.
  EXPECT_TRUE(modules(kBridge, "gpt-oss-120b", "gb200-186gb", 36, 1, 64).empty());
  EXPECT_TRUE(modules(kBridge, "gpt-oss-120b", "h100-sxm5-80gb", 36, 4, 8).empty());
  // Qwen3 and Llama presets: nothing, at every release.
  for (const std::string& stack : {r2509, std::string(kBridge), r2604}) {
    EXPECT_TRUE(modules(stack, "qwen3-30b-a3b", "b200-sxm-180gb", 48, 1, 8).empty());
    EXPECT_TRUE(modules(stack, "qwen3-235b-a22b", "h100-sxm5-80gb", 94, 8, 32).empty());
    EXPECT_TRUE(modules(stack, "llama3.1-405b", "gb200-186gb", 126, 16, 1).empty());
    EXPECT_TRUE(modules(stack, "llama3-8b", "h100-sxm5-80gb", 32, 1, 1).empty());
  }
  // GPT-OSS under another stack: none assumed.
  EXPECT_TRUE(modules("torchtitan", "gpt-oss-120b", "h100-sxm5-80gb", 36, 1, 8).empty());
}

// Llama 3 8B's H100 FP8-CS preset replays its first 5 layers in full from
// 25.11 on; its other GPUs and precisions, and 25.09, replay none.
TEST(RecipeParallelismTest, Llama3With8BOnH100Fp8CsRecomputesABlockOf5) {
  const std::string r2509 = "nemo-25.09 (Megatron-Bridge + Megatron-Core)";
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  const std::string cs = "FP8 per-tensor current scaling (FP8-CS)";
  auto block = [](const std::string& stack, const std::string& notes, const std::string& gpu) {
    return ForRecipe(stack, notes, "llama3-8b", gpu, 32, 1, 1, 1).recompute_block_layers;
  };
  EXPECT_EQ(block(kBridge, cs, "h100-sxm5-80gb"), 5);
  EXPECT_EQ(block(r2604, cs, "h100-sxm5-80gb"), 5);
  EXPECT_THAT(ForRecipe(kBridge, cs, "llama3-8b", "h100-sxm5-80gb", 32, 1, 1, 1).text,
              HasSubstr("full recompute of the first 5 layers of each model chunk"));
  EXPECT_EQ(block(r2509, cs, "h100-sxm5-80gb"), 0);
  EXPECT_EQ(block(kBridge, "BF16", "h100-sxm5-80gb"), 0);
  EXPECT_EQ(block(kBridge, cs, "b200-sxm-180gb"), 0);
  EXPECT_EQ(ForRecipe("torchtitan", cs, "llama3-8b", "h100-sxm5-80gb", 32, 1, 1, 1)
                .recompute_block_layers,
            0);
}

// The GB200 Megatron-FSDP presets offload activations (cpu_offloading_num_layers).
TEST(RecipeParallelismTest, Gb200FsdpPresetsOffloadActivations) {
  const std::string r2509 = "nemo-25.09 (Megatron-Bridge + Megatron-Core)";
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  const std::string gb200 = "gb200-186gb";
  EXPECT_EQ(BridgeCpuOffloadLayers(r2509, "llama3-70b", gb200, "fp8", "current", 1), 40);
  EXPECT_EQ(BridgeCpuOffloadLayers(kBridge, "llama3-70b", gb200, "fp8", "current", 1), 40);
  EXPECT_EQ(BridgeCpuOffloadLayers(r2604, "llama3-70b", gb200, "fp8", "current", 1), 40);
  EXPECT_EQ(BridgeCpuOffloadLayers(kBridge, "llama3-70b", gb200, "bf16", "", 1), 20);
  EXPECT_EQ(BridgeCpuOffloadLayers(r2509, "llama3.1-405b", gb200, "fp8", "current", 1), 95);
  EXPECT_EQ(BridgeCpuOffloadLayers(r2509, "llama3.1-405b", gb200, "fp8", "", 1), 95);
  EXPECT_EQ(BridgeCpuOffloadLayers(kBridge, "llama3.1-405b", gb200, "fp8", "current", 1), 92);
  // MXFP8 presets pipeline instead; other GPUs, stacks and pipelines: none.
  EXPECT_EQ(BridgeCpuOffloadLayers(kBridge, "llama3-70b", gb200, "fp8", "mxfp8", 1), 0);
  EXPECT_EQ(BridgeCpuOffloadLayers(kBridge, "llama3-70b", gb200, "fp8", "current", 4), 0);
  EXPECT_EQ(BridgeCpuOffloadLayers(kBridge, "llama3-70b", "h100-sxm5-80gb", "fp8", "current", 1),
            0);
  EXPECT_EQ(BridgeCpuOffloadLayers("torchtitan", "llama3-70b", gb200, "bf16", "", 1), 0);
  EXPECT_EQ(BridgeCpuOffloadLayers(kBridge, "llama3-8b", gb200, "fp8", "current", 1), 0);
}

// Nemotron 3 Nano (Megatron-Bridge 26.04, tag v0.4.0): HybridEP and no
// recompute on GB200 and B200; the H100 preset's whole-MoE recompute refuses
// the row.
TEST(RecipeParallelismTest, NemotronNanoFollowsTheBridgePreset) {
  const std::string stack = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  const RecipeParallelism gb =
      ForRecipe(stack, "", "nemotron-3-nano-30b-a3b", "gb200-186gb", 52, 1, 1, 8);
  EXPECT_EQ(gb.moe_dispatcher, "hybridep");
  EXPECT_TRUE(gb.recompute_modules.empty());
  EXPECT_TRUE(gb.missing.empty());
  EXPECT_EQ(gb.expert_tensor_parallel, 1);
  const RecipeParallelism h100 =
      ForRecipe(stack, "", "nemotron-3-nano-30b-a3b", "h100-sxm5-80gb", 52, 1, 1, 8);
  EXPECT_THAT(h100.missing, HasSubstr("\"moe\""));
}

TEST(RecipeParallelismTest, QwenPresetsThatOverlapTheExpertAllToAll) {
  const std::string b2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  const std::string h100 = "h100-sxm5-80gb";
  auto overlap = [](const std::string& stack, const std::string& preset, const std::string& gpu,
                    int pp, int vp, int ep) {
    return ForRecipe(stack, "", preset, gpu, preset == "qwen3-235b-a22b" ? 94 : 48, pp, vp, ep)
        .moe_a2a_overlap;
  };
  // v0.2.0 and v0.4.0 qwen3 workload_base_configs.py.
  EXPECT_TRUE(overlap(kBridge, "qwen3-235b-a22b", h100, 8, 4, 32));
  EXPECT_TRUE(overlap(kBridge, "qwen3-235b-a22b", "b200-sxm-180gb", 8, 4, 8));
  EXPECT_TRUE(overlap(kBridge, "qwen3-30b-a3b", h100, 2, 12, 8));
  EXPECT_TRUE(overlap(b2604, "qwen3-235b-a22b", h100, 8, 4, 32));
  EXPECT_FALSE(overlap(b2604, "qwen3-30b-a3b", h100, 1, 1, 16));
  EXPECT_FALSE(overlap(b2604, "qwen3-235b-a22b", "b200-sxm-180gb", 8, 4, 8));
  EXPECT_FALSE(overlap(kBridge, "qwen3-235b-a22b", "gb200-186gb", 8, 4, 8));
  // Megatron-Core would refuse it: pp > 1 without interleaving.
  EXPECT_FALSE(overlap(kBridge, "qwen3-235b-a22b", h100, 8, 1, 32));
}

// DeepSeek-V3's presets overlap the expert all-to-all on H100 in 25.09 and
// 25.11 and, in 26.04, only in the B200 MXFP8 preset with ep 32.
TEST(RecipeParallelismTest, DeepSeekPresetsThatOverlapTheExpertAllToAll) {
  const std::string r2509 = "nemo-25.09 (Megatron-Bridge + Megatron-Core)";
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  auto overlap = [](const std::string& stack, const std::string& gpu, int pp, int vp, int ep) {
    return ForRecipe(stack, "", "deepseek-v3-671b", gpu, 61, pp, vp, ep).moe_a2a_overlap;
  };
  EXPECT_TRUE(overlap(r2509, "h100-sxm5-80gb", 8, 4, 64));
  EXPECT_TRUE(overlap(kBridge, "h100-sxm5-80gb", 8, 4, 64));
  EXPECT_FALSE(overlap(r2509, "gb200-186gb", 4, 4, 64));
  EXPECT_FALSE(overlap(kBridge, "b200-sxm-180gb", 16, 1, 8));
  EXPECT_TRUE(overlap(r2604, "b200-sxm-180gb", 8, 2, 32));
  EXPECT_FALSE(overlap(r2604, "b200-sxm-180gb", 16, 1, 8));
  EXPECT_FALSE(overlap(r2604, "gb200-186gb", 4, 4, 64));
  EXPECT_FALSE(overlap(r2604, "h100-sxm5-80gb", 8, 4, 64));
}

// GPT-OSS 120B's 26.04 V2 presets (global batch 1280) dispatch with HybridEP
// on GB200 and B200 and overlap the all-to-all on GB200; V1 (512), H100 and
// 25.11 do neither.
TEST(RecipeParallelismTest, GptOssV2PresetsDispatchWithHybridEp) {
  const std::string r2604 = "nemo-26.04.01 (Megatron-Bridge + Megatron-Core)";
  auto recipe = [](const std::string& stack, const std::string& gpu, int pp, int ep, int gbs) {
    return ForRecipe(stack, "", "gpt-oss-120b", gpu, 36, pp, 1, ep, gbs);
  };
  const RecipeParallelism gb200 = recipe(r2604, "gb200-186gb", 1, 64, 1280);
  EXPECT_EQ(gb200.moe_dispatcher, "hybridep");
  EXPECT_TRUE(gb200.moe_a2a_overlap);
  const RecipeParallelism b200 = recipe(r2604, "b200-sxm-180gb", 1, 8, 1280);
  EXPECT_EQ(b200.moe_dispatcher, "hybridep");
  EXPECT_FALSE(b200.moe_a2a_overlap);
  const RecipeParallelism h100 = recipe(r2604, "h100-sxm5-80gb", 4, 8, 1280);
  EXPECT_EQ(h100.moe_dispatcher, "");
  EXPECT_FALSE(h100.moe_a2a_overlap);
  EXPECT_EQ(recipe(r2604, "gb200-186gb", 1, 64, 512).moe_dispatcher, "");
  EXPECT_EQ(recipe(kBridge, "gb200-186gb", 1, 64, 1280).moe_dispatcher, "");
  EXPECT_FALSE(recipe(kBridge, "gb200-186gb", 1, 64, 1280).moe_a2a_overlap);
}

}  // namespace
}  // namespace clustersim::scenarios
