#include "models/transformer_config.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Preset;
using ::testing::HasSubstr;

TEST(ModelCatalogTest, ShipsThePresetsUsersAskFor) {
  for (const char* name :
       {"gpt-22b", "gpt3-175b", "mt-nlg-530b", "gpt-1t", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b",
        "gpt3-13b", "megatron-1.7b", "megatron-145.6b", "llama2-7b", "llama2-13b", "llama2-70b",
        "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b", "mixtral-8x22b", "grok-1-314b",
        "nemotron4-15b", "nemotron4-340b", "opt-175b", "bloom-176b"}) {
    absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find(name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(c->name, name);
    EXPECT_TRUE(ValidateTransformer(*c).ok()) << name;
  }
  std::vector<std::string> names = ModelCatalog::Default().Names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(ModelCatalogTest, UnknownPresetListsNames) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("llama-70b");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(c.status().message(), HasSubstr("llama3-70b"));
}

TEST(ModelCatalogTest, LlamaPresetsUseGqaSwigluRmsNormUntied) {
  TransformerConfig c = Preset("llama3-70b");
  EXPECT_EQ(c.num_query_groups, 8);
  EXPECT_EQ(c.activation, Activation::kSwiglu);
  EXPECT_EQ(c.norm, Norm::kRmsNorm);
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_FALSE(c.learned_position_embeddings);
  TransformerConfig gpt = Preset("gpt3-175b");
  EXPECT_EQ(gpt.num_query_groups, gpt.num_attention_heads);
  EXPECT_TRUE(gpt.tied_embeddings);
  EXPECT_EQ(gpt.head_dim(), 128);
}

// Narayanan et al. SC'21 Table 1 "Number of parameters (billion)", printed to
// 0.1B; models.md §2 notes the formula reproduces every row to 0.1B.
TEST(ParameterCountTest, ReproducesNarayananTable1) {
  const std::pair<const char*, double> rows[] = {
      {"megatron-1.7b", 1.7},   {"megatron-3.6b", 3.6},   {"megatron-7.5b", 7.5},
      {"megatron-18.4b", 18.4}, {"megatron-39.1b", 39.1}, {"megatron-76.1b", 76.1},
      {"megatron-145.6b", 145.6}, {"megatron-310.1b", 310.1}, {"megatron-529.6b", 529.6},
      {"megatron-1008b", 1008.0}};
  for (const auto& [name, billions] : rows) {
    TransformerConfig c = Preset(name);
    EXPECT_NEAR(CountParameters(c).Total(c.num_layers) / 1e9, billions, 0.05) << name;
  }
}

// models.md §4 parameter totals (Megatron formulas, (d) columns): Nemotron-4
// 15.63B / 341.0B, Mixtral 46.70B / 140.6B, OPT-175B 174.6B, BLOOM 176.2B
// (less its 2h embedding LayerNorm, not modelled).
TEST(ParameterCountTest, MatchesModelsReferenceTotals) {
  const std::pair<const char*, double> rows[] = {
      {"nemotron4-15b", 15.63}, {"nemotron4-340b", 341.0}, {"mixtral-8x7b", 46.70},
      {"mixtral-8x22b", 140.6}, {"opt-175b", 174.6},       {"bloom-176b", 176.2}};
  for (const auto& [name, billions] : rows) {
    TransformerConfig c = Preset(name);
    EXPECT_NEAR(CountParameters(c).Total(c.num_layers) / 1e9 / billions, 1.0, 0.001) << name;
  }
  // xai-org/grok-1 README: "314B parameters", rounded; the shapes give 316.5B
  // with a 131,072-token vocabulary.
  const TransformerConfig grok = Preset("grok-1-314b");
  EXPECT_NEAR(CountParameters(grok).Total(grok.num_layers) / 1e9 / 314, 1.0, 0.01);
  EXPECT_EQ(Preset("nemotron4-15b").activation, Activation::kSquaredRelu);
}

// OPT-13B / OPT-66B (facebook/opt-* config.json) by hand: per layer
// 4h^2 (attention) + 2hf (MLP) + 5h + f (biases) + 4h (two LayerNorms); with
// V h + 2048 h + 2h outside the layers: 40 layers of h 5120 = 12.853B and
// 64 layers of h 9216 = 65.719B (the released 12.85B and 65.7B).
TEST(ParameterCountTest, OptPresetsMatchTheirConfigs) {
  for (const auto& [name, layers, h, billions] :
       {std::tuple{"opt-13b", 40, 5120, 12.853}, std::tuple{"opt-66b", 64, 9216, 65.719}}) {
    TransformerConfig c = Preset(name);
    EXPECT_EQ(c.num_layers, layers);
    EXPECT_EQ(c.hidden_size, h);
    EXPECT_EQ(c.ffn_hidden_size, 4 * h);
    EXPECT_EQ(c.vocab_size, 50272);
    EXPECT_TRUE(ValidateTransformer(c).ok()) << name;
    EXPECT_NEAR(CountParameters(c).Total(c.num_layers) / 1e9 / billions, 1.0, 0.001) << name;
  }
}

// Exact parameter counts of the released checkpoints (Hugging Face safetensors
// metadata): Llama-2-7b-hf 6,738,415,616; Meta-Llama-3-8B 8,030,261,248;
// Meta-Llama-3-70B 70,553,706,496.
TEST(ParameterCountTest, MatchesReleasedLlamaCheckpoints) {
  TransformerConfig l2 = Preset("llama2-7b");
  EXPECT_DOUBLE_EQ(CountParameters(l2).Total(l2.num_layers), 6738415616.0);
  TransformerConfig l3 = Preset("llama3-8b");
  EXPECT_DOUBLE_EQ(CountParameters(l3).Total(l3.num_layers), 8030261248.0);
  TransformerConfig l70 = Preset("llama3-70b");
  EXPECT_DOUBLE_EQ(CountParameters(l70).Total(l70.num_layers), 70553706496.0);
  // Untied: the LM head is a second V x h matrix.
  EXPECT_DOUBLE_EQ(CountParameters(l3).lm_head, 128256.0 * 4096);
  EXPECT_EQ(CountParameters(Preset("gpt3-175b")).lm_head, 0);
}

// Llama 3.1 (models.md Llama table): 8.03 / 70.55 / 405.85B at a 131,072-token
// context; the same shapes as the Llama 3 presets, so the same counts.
TEST(ParameterCountTest, Llama31PresetsAreLlama3AtItsLongContext) {
  const std::tuple<const char*, const char*, double> rows[] = {
      {"llama3.1-8b", "llama3-8b", 8.03},
      {"llama3.1-70b", "llama3-70b", 70.55},
      {"llama3.1-405b", "llama3-405b", 405.85}};
  for (const auto& [name, llama3, billions] : rows) {
    const TransformerConfig c = Preset(name);
    EXPECT_EQ(c.seq_length, 131072) << name;
    EXPECT_NEAR(CountParameters(c).Total(c.num_layers) / 1e9, billions, 0.005) << name;
    const TransformerConfig base = Preset(llama3);
    EXPECT_EQ(CountParameters(c).Total(c.num_layers),
              CountParameters(base).Total(base.num_layers)) << name;
  }
}

// GPT layer: 12h^2 + 13h (models.md §5.1, BLOOM README size calculator).
TEST(ParameterCountTest, GptLayerIsTwelveHSquaredPlusThirteenH) {
  TransformerConfig c = Preset("gpt3-175b");
  const double h = c.hidden_size;
  EXPECT_DOUBLE_EQ(CountParameters(c).per_layer, 12 * h * h + 13 * h);
  // GPT-3 paper Table 2.1: 175.0B stated; 174.6B with this accounting.
  EXPECT_NEAR(CountParameters(c).Total(c.num_layers) / 1e9, 175.0, 0.5);
}

TEST(ValidateTransformerTest, RejectsBadShapesNamingTheField) {
  TransformerConfig c = Preset("llama3-8b");
  c.num_query_groups = 5;  // 32 heads
  absl::Status s = ValidateTransformer(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("model.num_query_groups=5"));

  c = Preset("llama3-8b");
  c.hidden_size = 4100;  // 32 heads
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.hidden_size=4100"));

  c = Preset("gpt3-175b");
  c.alibi = true;  // with a learned position table
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.alibi"));

  c = Preset("llama3-8b");
  c.seq_length = 0;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.seq_length must be > 0"));

  c = Preset("llama3-8b");
  c.num_layers = -3;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.num_layers must be > 0"));

  c = Preset("llama3-8b");
  c.num_query_groups = 0;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("num_attention_heads=32"));

  c = Preset("llama3-8b");
  c.num_experts = 8;
  c.moe_top_k = 9;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.moe_top_k=9"));
  c.num_experts = 0;
  c.moe_top_k = 2;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.num_experts"));
}

TEST(ModelCatalogTest, ParseRejectsUnknownActivation) {
  absl::StatusOr<ModelCatalog> c = ModelCatalog::Parse(R"pb(
    model {
      name: "m" num_layers: 2 hidden_size: 64 ffn_hidden_size: 256 num_attention_heads: 4
      seq_length: 128 padded_vocab_size: 1024 activation: "relu" norm: "layernorm" source: "s"
    })pb");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("activation 'relu'"));
}

TEST(ValidateTransformerTest, GluVariantsAndYarnNameTheirField) {
  TransformerConfig c = Preset("gpt-oss-20b");
  EXPECT_TRUE(ValidateTransformer(c).ok());
  c.glu_clamp = -1;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.glu_clamp must be >= 0"));
  c = Preset("gpt-oss-20b");
  c.activation = Activation::kGelu;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.swiglu"));
  c = Preset("gpt-oss-20b");
  c.yarn_rope_factor = 0.5;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("model.yarn_rope_factor must be 0"));
  c = Preset("gpt3-1.3b");
  c.yarn_rope_factor = 4;
  EXPECT_THAT(ValidateTransformer(c).message(), HasSubstr("learned position table"));
}

}  // namespace
}  // namespace clustersim::models
