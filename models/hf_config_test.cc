#include "models/hf_config.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/hf_quantization.h"

namespace clustersim::models {
namespace {

using ::testing::HasSubstr;

std::string TestData(const char* file) {
  const char* root = std::getenv("CLUSTERSIM_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/models/testdata/" + file;
}

TransformerConfig Load(const char* file) {
  absl::StatusOr<TransformerConfig> c = LoadHfConfigFile(TestData(file));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : TransformerConfig{};
}

// The released checkpoints' safetensors totals (models/testdata/README.md).
TEST(HfConfigTest, Llama2And3MatchReleasedParameterCounts) {
  TransformerConfig l2 = Load("Llama-2-7b-hf.config.json");
  EXPECT_DOUBLE_EQ(CountParameters(l2).Total(l2.num_layers), 6738415616.0);
  EXPECT_EQ(l2.num_query_groups, 32);
  EXPECT_EQ(l2.seq_length, 4096);
  TransformerConfig l3 = Load("Meta-Llama-3-8B.config.json");
  EXPECT_DOUBLE_EQ(CountParameters(l3).Total(l3.num_layers), 8030261248.0);
  EXPECT_EQ(l3.num_query_groups, 8);
  EXPECT_EQ(l3.activation, Activation::kSwiglu);
  EXPECT_EQ(l3.norm, Norm::kRmsNorm);
  EXPECT_FALSE(l3.tied_embeddings);
  EXPECT_FALSE(l3.learned_position_embeddings);
  EXPECT_FALSE(l3.add_bias_linear);
}

// Same architecture as the shipped presets, field by field.
TEST(HfConfigTest, AgreesWithPresets) {
  for (auto [file, preset] : {std::pair{"Llama-2-7b-hf.config.json", "llama2-7b"},
                              std::pair{"Meta-Llama-3-8B.config.json", "llama3-8b"}}) {
    TransformerConfig hf = Load(file);
    absl::StatusOr<TransformerConfig> p = ModelCatalog::Default().Find(preset);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(CountParameters(hf).Total(hf.num_layers), CountParameters(*p).Total(p->num_layers))
        << file;
    EXPECT_EQ(hf.seq_length, p->seq_length) << file;
    EXPECT_EQ(hf.vocab_size, p->vocab_size) << file;
  }
}

// models.md §4.2: Mixtral 8x7B 46.70B total, 12.88B active (Megatron formulas).
TEST(HfConfigTest, MixtralIsMoeWithPublishedSize) {
  TransformerConfig m = Load("Mixtral-8x7B-v0.1.config.json");
  EXPECT_EQ(m.num_experts, 8);
  EXPECT_EQ(m.moe_top_k, 2);
  EXPECT_EQ(m.seq_length, 32768);  // max_position_embeddings: the context limit
  EXPECT_NEAR(CountParameters(m).Total(m.num_layers) / 1e9, 46.70, 0.005);
}

// DeepSeek-V3: MLA, 256 routed + 1 shared expert, 3 dense-first layers;
// 671B (models/testdata/README.md), the same architecture as the preset.
TEST(HfConfigTest, DeepSeekV3) {
  TransformerConfig m = Load("DeepSeek-V3.config.json");
  EXPECT_TRUE(m.mla());
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.head_dim(), 192);
  EXPECT_EQ(m.value_head_dim(), 128);
  EXPECT_EQ(m.num_experts, 256);
  EXPECT_EQ(m.moe_top_k, 8);
  EXPECT_EQ(m.expert_ffn_size(), 2048);
  EXPECT_EQ(m.moe_shared_expert_ffn_size, 2048);
  EXPECT_EQ(m.moe_first_dense_layers, 3);
  EXPECT_EQ(m.ffn_hidden_size, 18432);
  EXPECT_NEAR(CountParameters(m).Total(m.num_layers) / 1e9, 671.0, 671.0 * 0.005);
  absl::StatusOr<TransformerConfig> p = ModelCatalog::Default().Find("deepseek-v3-671b");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(CountParameters(m).Total(m.num_layers), CountParameters(*p).Total(p->num_layers));
}

// A block-scaled FP8 checkpoint (DeepSeek-V3/R1's released quantization_config)
// sets the activation group, the K block; per-tensor FP8 and MXFP4 leave it 0.
TEST(HfConfigTest, Fp8WeightBlockFromQuantizationConfig) {
  const std::string base =
      R"("hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
         "intermediate_size": 4096, "vocab_size": 1000, "max_position_embeddings": 512,
         "hidden_act": "silu", "model_type": "llama", "rms_norm_eps": 1e-5)";
  auto parse = [&](const std::string& quant) {
    return ParseHfConfig("{" + base + R"(, "quantization_config": )" + quant + "}", "q");
  };
  absl::StatusOr<TransformerConfig> block = parse(
      R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
          "weight_block_size": [128, 64]})");
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(block->fp8_weight_block, 64);
  absl::StatusOr<TransformerConfig> per_tensor = parse(R"({"quant_method": "fp8"})");
  ASSERT_TRUE(per_tensor.ok()) << per_tensor.status();
  EXPECT_EQ(per_tensor->fp8_weight_block, 0);
  absl::StatusOr<TransformerConfig> mxfp4 = parse(R"({"quant_method": "mxfp4"})");
  ASSERT_TRUE(mxfp4.ok()) << mxfp4.status();
  EXPECT_EQ(mxfp4->fp8_weight_block, 0);
  EXPECT_THAT(parse(R"({"quant_method": "fp8", "weight_block_size": [128]})").status().message(),
              HasSubstr("\"quantization_config.weight_block_size\" must be two positive"));
}

// fbgemm_fp8 (transformers' FbgemmFp8Config): Meta's own release lists the
// attention of every layer and the MLP of the first and last layers in
// modules_to_not_convert (fp8-mixed); with no layer listed every block linear
// is FP8; any other pattern, and MoE models, state no format.
TEST(HfConfigTest, FbgemmFp8CheckpointFormat) {
  const std::string base =
      R"("hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
         "intermediate_size": 4096, "vocab_size": 1000, "max_position_embeddings": 512,
         "hidden_act": "silu", "model_type": "llama", "rms_norm_eps": 1e-5)";
  auto parse = [&](const std::string& quant, const std::string& extra = "") {
    return ParseHfCheckpointWeightDtype(
        "{" + base + extra + R"(, "quantization_config": )" + quant + "}", "q");
  };
  std::string meta;
  for (int l = 0; l < 4; ++l) {
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      absl::StrAppend(&meta, "\"model.layers.", l, ".self_attn.", p, "\", ");
    }
  }
  for (int l : {0, 3}) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      absl::StrAppend(&meta, "\"model.layers.", l, ".mlp.", p, "\", ");
    }
  }
  absl::StrAppend(&meta, "\"lm_head\"");
  const std::string mixed = absl::StrCat(
      R"({"activation_scale_ub": 1200.0, "quant_method": "fbgemm_fp8", )",
      R"("modules_to_not_convert": [)",
      meta, "]}");
  absl::StatusOr<std::string> m = parse(mixed);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, "fp8-mixed");
  absl::StatusOr<std::string> all =
      parse(R"({"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["lm_head"]})");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, "fp8");
  EXPECT_EQ(*parse(R"({"quant_method": "fbgemm_fp8"})"), "fp8");
  // Only layer 0's MLP kept: neither format.
  absl::StatusOr<std::string> other = parse(R"({"quant_method": "fbgemm_fp8",
      "modules_to_not_convert": ["model.layers.0.mlp.up_proj"]})");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(*other, "");
  // A mixture-of-experts model (Meta's Llama 4 FP8 quantizes routed experts only).
  absl::StatusOr<std::string> moe =
      parse(mixed, R"(, "num_local_experts": 8, "num_experts_per_tok": 2)");
  ASSERT_TRUE(moe.ok()) << moe.status();
  EXPECT_EQ(*moe, "");
  EXPECT_EQ(*parse(R"({"quant_method": "fp8"})"), "");
  EXPECT_THAT(
      parse(R"({"quant_method": "fbgemm_fp8", "modules_to_not_convert": "lm_head"})")
          .status()
          .message(),
      HasSubstr("\"quantization_config.modules_to_not_convert\" must be a list"));
  EXPECT_THAT(
      parse(R"({"quant_method": "fbgemm_fp8", "modules_to_not_convert": [3]})").status().message(),
      HasSubstr("entries must be strings"));
  // The architecture's own errors pass through.
  EXPECT_FALSE(ParseHfCheckpointWeightDtype("{}", "q").ok());
  // A file without quantization_config states none; a missing file is NotFound.
  absl::StatusOr<std::string> plain =
      LoadHfCheckpointWeightDtype(TestData("Meta-Llama-3-8B.config.json"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*plain, "");
  EXPECT_EQ(LoadHfCheckpointWeightDtype(TestData("no-such.config.json")).status().code(),
            absl::StatusCode::kNotFound);
}

// Qwen3: head_dim 128 with hidden/heads 64 (MoE) or 80 (32B dense).
TEST(HfConfigTest, Qwen3HeadDimAndExperts) {
  TransformerConfig moe = Load("Qwen3-235B-A22B.config.json");
  EXPECT_EQ(moe.head_dim(), 128);
  EXPECT_EQ(moe.num_experts, 128);
  EXPECT_EQ(moe.expert_ffn_size(), 1536);
  EXPECT_EQ(moe.activation, Activation::kSwiglu);
  absl::StatusOr<TransformerConfig> p = ModelCatalog::Default().Find("qwen3-235b-a22b");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(CountParameters(moe).Total(moe.num_layers), CountParameters(*p).Total(p->num_layers));
  TransformerConfig dense = Load("Qwen3-32B.config.json");
  EXPECT_EQ(dense.head_dim(), 128);
  EXPECT_EQ(dense.num_experts, 0);
  // Model card: 32.8B; the per-head q/k norms (2·128 per layer) are not counted.
  EXPECT_NEAR(CountParameters(dense).Total(dense.num_layers) / 1e9, 32.8, 32.8 * 0.005);
}

// gpt-oss-120b: head_dim 64 (hidden 2880 / 64 heads is not whole), biases,
// 128 experts top-4; 116.83B (model card Table 1).
TEST(HfConfigTest, GptOss) {
  TransformerConfig m = Load("gpt-oss-120b.config.json");
  EXPECT_EQ(m.head_dim(), 64);
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.moe_top_k, 4);
  EXPECT_TRUE(m.add_bias_linear);
  EXPECT_EQ(m.activation, Activation::kSwiglu);
  EXPECT_NEAR(CountParameters(m).Total(m.num_layers) / 1e9, 116.83, 116.83 * 0.005);
  // swiglu_limit 7 and the gpt_oss quick-GELU gate; this file has no rope_scaling.
  EXPECT_EQ(m.glu_clamp, 7);
  EXPECT_TRUE(m.quick_gelu_glu);
  EXPECT_EQ(m.yarn_rope_factor, 0);
  // sliding_window 128 on the 18 "sliding_attention" layers of 36.
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_EQ(m.sliding_window_layers, 18);
}

TEST(HfConfigTest, SlidingWindowLayers) {
  const std::string base =
      R"("hidden_size": 4096, "num_hidden_layers": 12, "intermediate_size": 11008,
         "vocab_size": 32000, "max_position_embeddings": 32768, "rms_norm_eps": 1e-5,
         "num_attention_heads": 32)";
  // Gated families (mistral, qwen2) take silu; the others a GELU.
  auto parse = [&](const std::string& extra) {
    const bool gated = extra.find("mistral") != std::string::npos ||
                       extra.find("qwen2") != std::string::npos;
    return ParseHfConfig(absl::StrCat("{", base, R"(, "hidden_act": ")",
                                      gated ? "silu" : "gelu_pytorch_tanh", "\"", extra, "}"),
                         "x/config.json");
  };
  auto layers = [&](const std::string& extra) {
    absl::StatusOr<TransformerConfig> c = parse(extra);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::pair{c->sliding_window, c->sliding_window_layers} : std::pair{-1L, -1};
  };
  // Mistral 7B v0.1: every layer.
  EXPECT_EQ(layers(R"(, "model_type": "mistral", "sliding_window": 4096)"), std::pair(4096L, 12));
  // Gemma 3: every 6th layer global.
  EXPECT_EQ(layers(R"(, "model_type": "gemma3_text", "sliding_window": 1024,
                       "sliding_window_pattern": 6)"),
            std::pair(1024L, 10));
  // Gemma 2: alternating, layer 0 local.
  EXPECT_EQ(layers(R"(, "model_type": "gemma2", "sliding_window": 4096)"), std::pair(4096L, 6));
  // Qwen: a window that is switched off, and a null one.
  EXPECT_EQ(layers(R"(, "model_type": "qwen2", "sliding_window": 4096,
                       "use_sliding_window": false)"),
            std::pair(0L, 0));
  EXPECT_EQ(layers(R"(, "model_type": "mistral", "sliding_window": null)"), std::pair(0L, 0));
  // Bad input names the field.
  EXPECT_THAT(parse(R"(, "sliding_window": -5)").status().message(),
              HasSubstr("\"sliding_window\" must be a positive integer"));
  EXPECT_THAT(parse(R"(, "sliding_window": 128, "layer_types": ["full_attention"])")
                  .status()
                  .message(),
              HasSubstr("\"layer_types\" must list one type per layer (12"));
  std::string types = R"(, "sliding_window": 128, "layer_types": ["chunked_attention")";
  for (int i = 1; i < 12; ++i) types += R"(, "full_attention")";
  EXPECT_THAT(parse(types + "]").status().message(),
              HasSubstr("\"layer_types\" entry \"chunked_attention\""));
  EXPECT_THAT(parse(R"(, "sliding_window": 128, "sliding_window_pattern": 0)").status().message(),
              HasSubstr("\"sliding_window_pattern\" must be a positive integer"));
}

TEST(HfConfigTest, YarnRopeScalingFactor) {
  const std::string base =
      R"("hidden_size": 4096, "num_hidden_layers": 32, "intermediate_size": 11008,
         "vocab_size": 32000, "max_position_embeddings": 4096, "hidden_act": "silu",
         "model_type": "llama", "rms_norm_eps": 1e-5, "num_attention_heads": 32)";
  auto parse = [&](const std::string& extra) {
    return ParseHfConfig("{" + base + extra + "}", "x/config.json");
  };
  absl::StatusOr<TransformerConfig> yarn =
      parse(R"(, "rope_scaling": {"rope_type": "yarn", "factor": 32.0})");
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  EXPECT_EQ(yarn->yarn_rope_factor, 32);
  EXPECT_FALSE(yarn->quick_gelu_glu);
  absl::StatusOr<TransformerConfig> llama3 =
      parse(R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0})");
  ASSERT_TRUE(llama3.ok());
  EXPECT_EQ(llama3->yarn_rope_factor, 0);
  EXPECT_THAT(parse(R"(, "rope_scaling": {"type": "yarn", "factor": 0.5})").status().message(),
              HasSubstr("\"factor\" >= 1"));
  EXPECT_THAT(parse(R"(, "swiglu_limit": -1)").status().message(),
              HasSubstr("\"swiglu_limit\" must be a number >= 0"));
}

TEST(HfConfigTest, ErrorsNameTheField) {
  const std::string base =
      R"("hidden_size": 4096, "num_hidden_layers": 32, "intermediate_size": 11008,
         "vocab_size": 32000, "max_position_embeddings": 4096, "hidden_act": "silu",
         "model_type": "llama", "rms_norm_eps": 1e-5)";
  auto parse = [&](const std::string& extra) {
    return ParseHfConfig("{" + base + extra + "}", "x/config.json");
  };
  ASSERT_TRUE(parse(R"(, "num_attention_heads": 32)").ok());

  absl::StatusOr<TransformerConfig> missing = parse("");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("x/config.json"));
  EXPECT_THAT(missing.status().message(), HasSubstr("\"num_attention_heads\""));

  absl::StatusOr<TransformerConfig> gqa =
      parse(R"(, "num_attention_heads": 32, "num_key_value_heads": 5)");
  ASSERT_FALSE(gqa.ok());
  EXPECT_THAT(gqa.status().message(), HasSubstr("\"num_key_value_heads\"=5"));

  absl::StatusOr<TransformerConfig> zero = parse(R"(, "num_attention_heads": 0)");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("\"num_attention_heads\" must be a positive"));

  absl::StatusOr<TransformerConfig> negative =
      ParseHfConfig(R"({"hidden_size": -4096, "num_hidden_layers": 2, "num_attention_heads": 4,
                        "intermediate_size": 256, "vocab_size": 128,
                        "max_position_embeddings": 64, "hidden_act": "gelu"})",
                    "y");
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("\"hidden_size\" must be a positive"));

  absl::StatusOr<TransformerConfig> fractional = parse(R"(, "num_attention_heads": 30)");
  ASSERT_FALSE(fractional.ok());
  EXPECT_THAT(fractional.status().message(), HasSubstr("add \"head_dim\""));

  absl::StatusOr<TransformerConfig> lone = parse(
      R"(, "num_attention_heads": 32, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
         "qk_rope_head_dim": 64)");
  ASSERT_FALSE(lone.ok());
  EXPECT_THAT(lone.status().message(), HasSubstr("\"v_head_dim\""));

  absl::StatusOr<TransformerConfig> mlp_only =
      parse(R"(, "num_attention_heads": 32, "num_experts": 4, "num_experts_per_tok": 2,
               "mlp_only_layers": [3])");
  ASSERT_FALSE(mlp_only.ok());
  EXPECT_THAT(mlp_only.status().message(), HasSubstr("\"mlp_only_layers\""));

  absl::StatusOr<TransformerConfig> moe_layers =
      parse(R"(, "num_attention_heads": 32, "num_local_experts": 4, "num_experts_per_tok": 1,
               "interleave_moe_layer_step": 2, "moe_layers": [0, 2])");
  ASSERT_FALSE(moe_layers.ok());
  EXPECT_THAT(moe_layers.status().message(), HasSubstr("\"moe_layers\""));

  absl::StatusOr<TransformerConfig> too_sparse =
      parse(R"(, "num_attention_heads": 32, "num_experts": 4, "num_experts_per_tok": 2,
               "decoder_sparse_step": 40)");
  ASSERT_FALSE(too_sparse.ok());
  EXPECT_THAT(too_sparse.status().message(), HasSubstr("model.moe_layer_step=40"));

  absl::StatusOr<TransformerConfig> topk =
      parse(R"(, "num_attention_heads": 32, "num_local_experts": 2, "num_experts_per_tok": 3)");
  ASSERT_FALSE(topk.ok());
  EXPECT_THAT(topk.status().message(), HasSubstr("\"num_experts_per_tok\"=3"));

  absl::StatusOr<TransformerConfig> act =
      ParseHfConfig(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                        "intermediate_size": 256, "vocab_size": 128,
                        "max_position_embeddings": 64, "hidden_act": "tanh"})",
                    "z");
  ASSERT_FALSE(act.ok());
  EXPECT_THAT(act.status().message(), HasSubstr("\"hidden_act\"=\"tanh\""));

  EXPECT_FALSE(ParseHfConfig("[1, 2]", "list").ok());
  EXPECT_FALSE(ParseHfConfig("{\"hidden_size\": ", "truncated").ok());
  EXPECT_EQ(LoadHfConfigFile("/nonexistent/config.json").status().code(),
            absl::StatusCode::kNotFound);
}

// Llama 4 Maverick (a multimodal config: the language model in text_config):
// interleave_moe_layer_step 2 makes layers 1, 3, ..., 47 MoE;
// intermediate_size is the routed and shared experts' FFN, intermediate_size_mlp
// the dense layers'. The same model as the llama4-maverick-400b preset, 400B
// total (models/testdata/README.md).
TEST(HfConfigTest, Llama4MaverickInterleavesMoeLayers) {
  TransformerConfig m = Load("Llama-4-Maverick-17B-128E.config.json");
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.hidden_size, 5120);
  EXPECT_EQ(m.num_query_groups, 8);
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.activation, Activation::kSwiglu);
  EXPECT_FALSE(m.tied_embeddings);  // from the top level, beside text_config
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.moe_top_k, 1);
  EXPECT_EQ(m.ffn_hidden_size, 16384);
  EXPECT_EQ(m.expert_ffn_size(), 8192);
  EXPECT_EQ(m.moe_shared_expert_ffn_size, 8192);
  EXPECT_EQ(m.moe_layer_step, 2);
  EXPECT_FALSE(m.IsMoeLayer(0));
  EXPECT_TRUE(m.IsMoeLayer(1));
  EXPECT_TRUE(m.IsMoeLayer(47));
  EXPECT_EQ(m.num_moe_layers(), 24);
  absl::StatusOr<TransformerConfig> p = ModelCatalog::Default().Find("llama4-maverick-400b");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(CountParameters(m).Total(m.num_layers), CountParameters(*p).Total(p->num_layers));
}

// Qwen-MoE's decoder_sparse_step has the same convention as Llama 4's step.
TEST(HfConfigTest, DecoderSparseStepInterleaves) {
  absl::StatusOr<TransformerConfig> c = ParseHfConfig(
      R"({"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
          "intermediate_size": 256, "moe_intermediate_size": 32, "vocab_size": 128,
          "max_position_embeddings": 64, "hidden_act": "silu", "model_type": "qwen2_moe",
          "rms_norm_eps": 1e-6, "num_experts": 8, "num_experts_per_tok": 2,
          "decoder_sparse_step": 2, "mlp_only_layers": []})",
      "q");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->moe_layer_step, 2);
  EXPECT_EQ(c->num_moe_layers(), 2);
  EXPECT_TRUE(c->IsMoeLayer(3));
  EXPECT_FALSE(c->IsMoeLayer(2));
}

// Non-gated families: GeLU-shaped MLP, LayerNorm without rms_norm_eps, and
// tie_word_embeddings defaulting to true as in transformers.
TEST(HfConfigTest, NonGatedDefaults) {
  absl::StatusOr<TransformerConfig> c =
      ParseHfConfig(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                        "intermediate_size": 256, "vocab_size": 128, "seq_length": 32,
                        "max_position_embeddings": 64, "hidden_act": "relu2",
                        "layer_norm_eps": 1e-5, "model_type": "nemotron"})",
                    "n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->activation, Activation::kSquaredRelu);
  EXPECT_EQ(c->norm, Norm::kLayerNorm);
  EXPECT_TRUE(c->tied_embeddings);
  EXPECT_EQ(c->seq_length, 32);  // seq_length wins over max_position_embeddings
  EXPECT_EQ(c->name, "hf:n");
}

// NemotronH: the hybrid pattern, the Mamba-2 mixer and the MoE fields load
// into the same configuration as the preset (which trains at 8192 tokens).
TEST(HfConfigTest, NemotronHLoadsTheHybridLayers) {
  TransformerConfig c = Load("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.config.json");
  absl::StatusOr<TransformerConfig> preset =
      ModelCatalog::Default().Find("nemotron-3-nano-30b-a3b");
  ASSERT_TRUE(preset.ok());
  EXPECT_EQ(c.hybrid_pattern, preset->hybrid_pattern);
  EXPECT_EQ(c.Kind(5), LayerKind::kAttention);
  EXPECT_EQ(c.mamba_num_heads, 64);
  EXPECT_EQ(c.mamba_head_dim, 64);
  EXPECT_EQ(c.mamba_state_dim, 128);
  EXPECT_EQ(c.mamba_num_groups, 8);
  EXPECT_EQ(c.mamba_chunk_size, 128);
  EXPECT_EQ(c.activation, Activation::kSquaredRelu);
  EXPECT_EQ(c.norm, Norm::kRmsNorm);
  EXPECT_EQ(c.moe_shared_expert_ffn_size, 3712);  // not n_shared_experts x 1856
  EXPECT_EQ(c.seq_length, 262144);
  c.seq_length = preset->seq_length;
  EXPECT_DOUBLE_EQ(CountParameters(c).Total(c.num_layers),
                   CountParameters(*preset).Total(preset->num_layers));
  // A NemotronH config without its pattern names the field.
  absl::StatusOr<TransformerConfig> bad = ParseHfConfig(
      R"({"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 128,
          "max_position_embeddings": 64, "mlp_hidden_act": "relu2"})",
      "h");
  EXPECT_THAT(bad.status().message(), HasSubstr("hybrid_override_pattern"));
}

}  // namespace
}  // namespace clustersim::models
