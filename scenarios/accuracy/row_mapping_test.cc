#include "scenarios/accuracy/row_mapping.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/framework_profile.h"
#include "scenarios/accuracy/published_row_stack.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

TEST(RowMappingTest, GpuCellsMapOntoTheCatalogOrNowhere) {
  std::string note;
  EXPECT_EQ(CatalogGpu("H100-80GB (8 GPUs/node; README refers to DGX H100)", &note),
            "h100-sxm5-80gb");
  EXPECT_TRUE(note.empty());
  EXPECT_EQ(CatalogGpu("H100-SXM-80GB (DGX-H100)", &note), "h100-sxm5-80gb");
  EXPECT_EQ(CatalogGpu("A100-40GB (MosaicML platform)", &note), "a100-sxm4-40gb");
  EXPECT_EQ(CatalogGpu("A100-SXM4-80GB", &note), "a100-sxm4-80gb");
  EXPECT_EQ(CatalogGpu("B200 (DGX-B200)", &note), "b200-sxm-180gb");
  EXPECT_EQ(CatalogGpu("H200 (8/node NVLink)", &note), "h200-sxm-141gb");
  EXPECT_EQ(CatalogGpu("GB200 (DGX-GB200)", &note), "gb200-186gb");
  EXPECT_EQ(CatalogGpu("MI300X (8/node)", &note), "");
  // A stand-in says so.
  EXPECT_EQ(CatalogGpu("H100-SXM 96GB HBM2e at 500 W power limit", &note), "h100-sxm5-80gb");
  EXPECT_NE(note.find("stands in"), std::string::npos);
}

TEST(RowMappingTest, StatedPowerLimitsAreRead) {
  EXPECT_EQ(StatedPowerLimitW("H100-SXM 96GB HBM2e at 500 W power limit (Meta Grand Teton)"), 500);
  EXPECT_EQ(StatedPowerLimitW("H100-SXM-80GB (700 W; 8 per server)"), 0);
  EXPECT_EQ(StatedPowerLimitW("A100-80GB"), 0);
}

TEST(RowMappingTest, StatedOmniPathLinksAreRead) {
  EXPECT_EQ(StatedOmniPathLinks("A100-80GB (Jean Zay: 8 GPUs/node with NVLink, 4 OmniPath links "
                                "per node; per tr11 README)"),
            4);
  EXPECT_EQ(StatedOmniPathLinks("A100-80GB"), 0);
  EXPECT_EQ(StatedOmniPathLinks("H100-SXM-80GB (8x 400 Gb/s InfiniBand per node)"), 0);
}

TEST(RowMappingTest, ModelNamesFindTheirPresets) {
  EXPECT_EQ(PresetFor("Llama 3.1 405B"), "llama3.1-405b");
  EXPECT_EQ(PresetFor("Llama 3 8B"), "llama3-8b");
  EXPECT_EQ(PresetFor("LLAMA2-7B"), "llama2-7b");
  EXPECT_EQ(PresetFor("BLOOM-176B design candidate (181B, NHIDDEN=14336, NLAYERS=72)"),
            "bloom-176b");
  EXPECT_EQ(PresetFor("Nemotron-4 15B"), "nemotron4-15b");
  EXPECT_EQ(PresetFor("Nemotron-340B"), "nemotron4-340b");
  EXPECT_EQ(PresetFor("Grok-1 314B (MoE 8 experts top-2)"), "grok-1-314b");
  EXPECT_EQ(PresetFor("GPT-3 175B (Paxml Synthetic175B)"), "gpt3-175b");
  EXPECT_EQ(PresetFor("DeepSeek-V3 671B"), "deepseek-v3-671b");
  EXPECT_EQ(PresetFor("DeepSeek V3 671B"), "deepseek-v3-671b");
  EXPECT_EQ(PresetFor("DeepSeek-V3 (tokendrop)"), "deepseek-v3-671b");
  EXPECT_EQ(PresetFor("Qwen3-235B-A22B (tokendrop)"), "qwen3-235b-a22b");
  EXPECT_EQ(PresetFor("Qwen3 MoE 30B"), "qwen3-30b-a3b");
  EXPECT_EQ(PresetFor("GPT-OSS 120B"), "gpt-oss-120b");
  EXPECT_EQ(PresetFor("GPT-OSS 20B"), "gpt-oss-20b");
  EXPECT_EQ(PresetFor("Llama 4 Maverick 400B (MoE 128 experts)"), "llama4-maverick-400b");
  EXPECT_EQ(PresetFor("Kimi K2"), "");
  EXPECT_EQ(PresetFor("MPT-7B"), "");
  EXPECT_EQ(PresetFor("GPT 1.7B"), "");
}

TEST(RowMappingTest, MixturesOfExpertsWithoutAPresetAreNamed) {
  EXPECT_NE(UnsupportedArchitecture("Kimi K2", "", "64"), "");
  EXPECT_EQ(UnsupportedArchitecture("Nemotron-H 56B (hybrid Mamba-Transformer)", "", ""), "");
  EXPECT_EQ(PresetFor("Nemotron-H 56B (hybrid Mamba-Transformer)"), "nemotron-h-56b");
  // Nemotron 3: Super's latent MoE is not modelled; Nano's recipes are not pinned.
  EXPECT_THAT(UnsupportedArchitecture("Nemotron 3 Super", "", "64"), HasSubstr("latent"));
  EXPECT_THAT(UnsupportedArchitecture("Nemotron V3 Nano 30B (26.02)", "", "8"),
              HasSubstr("AutoModel"));
  EXPECT_EQ(PresetFor("Nemotron 3 Nano"), "nemotron-3-nano-30b-a3b");
  EXPECT_EQ(UnsupportedArchitecture("DeepSeek-V3 671B", "", "64"), "");  // presets now
  EXPECT_EQ(UnsupportedArchitecture("Qwen3-30B-A3B", "", ""), "");
  EXPECT_NE(UnsupportedArchitecture("Some model", "128 experts top-8", ""), "");
  EXPECT_EQ(UnsupportedArchitecture("Llama 3 70B", "", ""), "");
  EXPECT_EQ(UnsupportedArchitecture("Mixtral 8x7B", "", "8"), "");  // a preset
  EXPECT_EQ(UnsupportedArchitecture("Llama 4 Maverick 400B (MoE 128 experts)", "", "64"), "");
}

TEST(RowMappingTest, CompileIsReadFromTheRowsText) {
  EXPECT_TRUE(StatesCompile("FSDP + torch.compile; peak memory 77.0 GiB"));
  EXPECT_TRUE(StatesCompile("Table 2: FSDP + CP + torch.compile + Float8"));
  EXPECT_TRUE(StatesCompile("seq_len 8192 and compile=true from train_configs"));
  EXPECT_FALSE(StatesCompile("FSDP only (no compile); peak memory 82.4 GiB"));
  EXPECT_FALSE(StatesCompile("1D FSDP2; source MFU 56.8%"));
  // Only torchtitan defaults to eager; its rows say when they compiled.
  EXPECT_TRUE(AssumptionsForStack("torchtitan 9dec370")->eager_unless_compiled);
  EXPECT_FALSE(AssumptionsForStack("nemo-automodel (x)")->eager_unless_compiled);
  EXPECT_FALSE(AssumptionsForStack("nemo-25.04 (x)")->eager_unless_compiled);
  // Only torchtitan's selective is per-op (selective_ac_option "op").
  EXPECT_TRUE(AssumptionsForStack("torchtitan 9dec370")->op_selective);
  EXPECT_FALSE(AssumptionsForStack("nemo-automodel (x)")->op_selective);
  EXPECT_FALSE(AssumptionsForStack("meta-llama3 (x)")->op_selective);
}

TEST(RowMappingTest, EveryStackMapsOntoAShippedProfile) {
  const char* cells[] = {
      "nemo-24.11 (NeMo Megatron launcher, Megatron-Core)",
      "nemo-25.09 (Megatron-Bridge + Megatron-Core)",
      "megatron-deepspeed (bigscience-workshop/Megatron-DeepSpeed)",
      "pytorch-fsdp-llm-foundry (Composer)",
      "torchtitan 9dec370 (2024-12-26)",
      "nemo-automodel (PyTorch-native FSDP2 backend)",
      "jax-maxtext (ghcr.io/nvidia/jax:maxtext-2024-12-09)",
      "meta-llama3 (Meta's PyTorch 4D parallelism)",
  };
  const char* stacks[] = {"megatron-core", "megatron-core", "megatron-deepspeed",
                          "pytorch-fsdp",  "pytorch-fsdp2", "pytorch-fsdp2",
                          "jax-xla",       "pytorch-fsdp2"};
  for (size_t i = 0; i < std::size(cells); ++i) {
    absl::StatusOr<RowAssumptions> a = AssumptionsForStack(cells[i]);
    ASSERT_TRUE(a.ok()) << cells[i];
    EXPECT_EQ(a->framework, stacks[i]) << cells[i];
    EXPECT_TRUE(models::FrameworkCatalog::Default().Find(a->framework).ok());
    EXPECT_FALSE(a->text.empty());
  }
  // Llama 3's FSDP keeps parameters whole after the forward pass.
  EXPECT_EQ(AssumptionsForStack("meta-llama3 (x)")->zero_stage, 2);
  // torchtitan shards every parameter (ZeRO-3) but, with a pipeline, keeps
  // them gathered across micro-batches (ZeRO-2); NeMo AutoModel states no such rule.
  EXPECT_EQ(AssumptionsForStack("torchtitan 9dec370")->zero_stage, 3);
  EXPECT_EQ(AssumptionsForStack("torchtitan 9dec370")->zero_stage_with_pipeline, 2);
  EXPECT_EQ(AssumptionsForStack("nemo-automodel (x)")->zero_stage_with_pipeline, 0);
  // AutoModel's MoE models defer the gradient sync when the row states
  // enable_fsdp_optimizations; torchtitan has no such setting.
  EXPECT_EQ(AssumptionsForStack("nemo-automodel (x)")->deferred_sync_setting,
            "enable_fsdp_optimizations: true");
  EXPECT_TRUE(AssumptionsForStack("torchtitan 9dec370")->deferred_sync_setting.empty());
  // AutoModel rows stating attn: te run Transformer Engine's attention.
  EXPECT_EQ(AssumptionsForStack("nemo-automodel (x)")->te_attention_setting, "attn: te");
  EXPECT_TRUE(AssumptionsForStack("torchtitan 9dec370")->te_attention_setting.empty());
  // AutoModel rows stating its fake balanced gate route round-robin.
  EXPECT_EQ(AssumptionsForStack("nemo-automodel (x)")->round_robin_routing_setting,
            "fake_balanced_gate: true");
  EXPECT_TRUE(AssumptionsForStack("torchtitan 9dec370")->round_robin_routing_setting.empty());
  EXPECT_EQ(AssumptionsForStack("mxnet 1.2").status().code(), absl::StatusCode::kNotFound);
  // The published sources run Megatron-Core, each with its own recipe.
  EXPECT_EQ(AssumptionsForSource("MCORE24").framework, "megatron-core");
  EXPECT_TRUE(AssumptionsForSource("MCORE24").tp_comm_overlap);
  EXPECT_EQ(AssumptionsForSource("NAR21").attention, "unfused");
}

// The FP8 recipe a row states: MXFP8 / FP8-MX block scaling, FP8-CS or
// current scaling, a Megatron-Bridge row marked per-tensor (FP8-CS in its
// tables); otherwise the default, delayed scaling.
TEST(RowMappingTest, Fp8RecipesAreReadFromTheNotes) {
  using validation_internal::Fp8RecipeOfRow;
  const std::string bridge = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md";
  EXPECT_EQ(Fp8RecipeOfRow("MXFP8 (FP8-MX, block-scaled)", bridge), "mxfp8");
  EXPECT_EQ(Fp8RecipeOfRow("FP8 per-tensor current scaling (FP8-CS)", bridge), "current");
  EXPECT_EQ(Fp8RecipeOfRow("FP8 (per-tensor; table says FP8)", bridge), "current");
  EXPECT_EQ(Fp8RecipeOfRow("FP8 (per-tensor)", "NVIDIA/dgxc-benchmarking"), "");
  EXPECT_EQ(Fp8RecipeOfRow("FP8; NeMo 24.07", "NVIDIA NeMo performance summary"), "");
  const std::string titan = "pytorch/torchtitan";
  EXPECT_EQ(Fp8RecipeOfRow("quantization 'float8 rowwise', vanilla TP", titan), "rowwise");
  EXPECT_EQ(Fp8RecipeOfRow("quantization 'float8 tensorwise'", titan), "");
}

}  // namespace
}  // namespace clustersim::scenarios
