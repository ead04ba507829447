#include "scenarios/input/resolve_model.h"

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

std::string TestData(const char* file) {
  const char* root = std::getenv("CLUSTERSIM_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/models/testdata/" + file;
}

TEST(ResolveModelTest, ModelConfigFileIsTheBaseAndFieldsOverrideIt) {
  config::ModelConfig in;
  in.set_model_config_file(TestData("Mixtral-8x7B-v0.1.config.json"));
  in.set_seq_length(4096);  // the training length, not the 32768 context limit
  models::TransformerConfig m;
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.num_experts, 8);
  EXPECT_EQ(m.moe_top_k, 2);
  EXPECT_EQ(m.num_query_groups, 8);     // from the file, not reset to the heads
  EXPECT_EQ(m.ffn_hidden_size, 14336);  // not reset to 4h
  EXPECT_EQ(m.seq_length, 4096);
  config::ModelConfig echo;
  EchoModel(m, &echo);
  EXPECT_EQ(echo.moe_capacity_factor(), 1.0);
}

// The router's skew comes with the DeepSeek-V3/R1 preset, is echoed, can be
// overridden, and a bad value names the field.
TEST(ResolveModelTest, ExpertLoadSkew) {
  config::ModelConfig in;
  in.set_preset("deepseek-v3-671b");
  models::TransformerConfig m;
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_DOUBLE_EQ(m.moe_expert_load_cv, 1.28);
  config::ModelConfig echo;
  EchoModel(m, &echo);
  EXPECT_DOUBLE_EQ(echo.moe_expert_load_cv(), 1.28);
  in.set_moe_expert_load_cv(0);
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.moe_expert_load_cv, 0);
  in.set_moe_expert_load_cv(-1);
  EXPECT_THAT(ResolveModel(in, &m).message(), HasSubstr("model.moe_expert_load_cv"));
  config::ModelConfig mixtral;
  mixtral.set_preset("mixtral-8x7b");
  ASSERT_TRUE(ResolveModel(mixtral, &m).ok());
  EXPECT_EQ(m.moe_expert_load_cv, 0);  // no source: uniform routing
}

// DeepSeek-V3/R1's FP8 checkpoint is block-scaled (128 x 128): the preset
// carries the block, echoes it, takes 0 (per-tensor) and refuses a negative.
TEST(ResolveModelTest, Fp8WeightBlock) {
  config::ModelConfig in;
  in.set_preset("deepseek-v3-671b");
  models::TransformerConfig m;
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.fp8_weight_block, 128);
  config::ModelConfig echo;
  EchoModel(m, &echo);
  EXPECT_EQ(echo.fp8_weight_block(), 128);
  in.set_fp8_weight_block(0);
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.fp8_weight_block, 0);
  in.set_fp8_weight_block(-1);
  EXPECT_THAT(ResolveModel(in, &m).message(), HasSubstr("model.fp8_weight_block"));
}

TEST(ResolveModelTest, ModelConfigFileErrorsNameTheField) {
  config::ModelConfig in;
  in.set_model_config_file("/nonexistent/config.json");
  models::TransformerConfig m;
  absl::Status s = ResolveModel(in, &m);
  EXPECT_THAT(s.message(), HasSubstr("model.model_config_file"));
  in.set_preset("llama3-8b");
  s = ResolveModel(in, &m);
  EXPECT_THAT(s.message(), HasSubstr("model.preset and model.model_config_file"));
}

// The architecture fields override a preset, are echoed only when set, and
// bad values name the field.
TEST(ResolveModelTest, ArchitectureFields) {
  config::ModelConfig in;
  in.set_preset("qwen3-30b-a3b");
  in.set_moe_shared_expert_ffn_size(1536);
  models::TransformerConfig m;
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.expert_ffn_size(), 768);
  EXPECT_EQ(m.moe_shared_expert_ffn_size, 1536);
  config::ModelConfig echo;
  EchoModel(m, &echo);
  EXPECT_EQ(echo.head_dim(), 128);
  EXPECT_EQ(echo.moe_shared_expert_ffn_size(), 1536);
  EXPECT_FALSE(echo.has_kv_lora_rank());

  config::ModelConfig dense;
  dense.set_preset("llama3-8b");
  ASSERT_TRUE(ResolveModel(dense, &m).ok());
  config::ModelConfig plain;
  EchoModel(m, &plain);
  EXPECT_FALSE(plain.has_head_dim());
  EXPECT_FALSE(plain.has_moe_ffn_hidden_size());
  dense.set_moe_first_dense_layers(2);
  EXPECT_THAT(ResolveModel(dense, &m).message(), HasSubstr("model.moe_first_dense_layers=2"));

  // Llama 4 Maverick's interleaved MoE layers are echoed; overriding the step
  // to 1 makes every layer MoE.
  config::ModelConfig maverick;
  maverick.set_preset("llama4-maverick-400b");
  ASSERT_TRUE(ResolveModel(maverick, &m).ok());
  EXPECT_EQ(m.num_moe_layers(), 24);
  config::ModelConfig interleaved;
  EchoModel(m, &interleaved);
  EXPECT_EQ(interleaved.moe_layer_step(), 2);
  EXPECT_FALSE(plain.has_moe_layer_step());
  maverick.set_moe_layer_step(1);
  ASSERT_TRUE(ResolveModel(maverick, &m).ok());
  EXPECT_EQ(m.num_moe_layers(), 48);
  maverick.set_moe_layer_step(-2);
  EXPECT_THAT(ResolveModel(maverick, &m).message(), HasSubstr("model.moe_layer_step must be >= 0"));

  config::ModelConfig latent;
  latent.set_preset("deepseek-v3-671b");
  latent.set_v_head_dim(0);
  EXPECT_THAT(ResolveModel(latent, &m).message(), HasSubstr("model.v_head_dim must be > 0"));

  // gpt-oss's GLU variants and YaRN factor come from the preset, are echoed,
  // can be turned off, and bad values name their field.
  config::ModelConfig oss;
  oss.set_preset("gpt-oss-120b");
  ASSERT_TRUE(ResolveModel(oss, &m).ok());
  config::ModelConfig echoed;
  EchoModel(m, &echoed);
  EXPECT_EQ(echoed.glu_clamp(), 7);
  EXPECT_TRUE(echoed.quick_gelu_glu());
  EXPECT_EQ(echoed.yarn_rope_factor(), 32);
  EXPECT_FALSE(plain.has_glu_clamp());
  oss.set_glu_clamp(0);
  oss.set_quick_gelu_glu(false);
  oss.set_yarn_rope_factor(0);
  ASSERT_TRUE(ResolveModel(oss, &m).ok());
  EXPECT_EQ(m.glu_clamp, 0);
  EXPECT_FALSE(m.quick_gelu_glu);
  oss.set_glu_clamp(-7);
  EXPECT_THAT(ResolveModel(oss, &m).message(), HasSubstr("model.glu_clamp must be >= 0"));
  oss.clear_glu_clamp();
  oss.set_yarn_rope_factor(0.5);
  EXPECT_THAT(ResolveModel(oss, &m).message(), HasSubstr("model.yarn_rope_factor must be 0"));
  oss.clear_yarn_rope_factor();
  oss.set_swiglu(false);
  EXPECT_THAT(ResolveModel(oss, &m).message(), HasSubstr("set model.swiglu"));
  // A hybrid model's pattern and Mamba sizes are echoed and read back; a
  // layer count the pattern does not have is refused with the field named.
  config::ModelConfig hybrid;
  hybrid.set_preset("nemotron-h-56b");
  ASSERT_TRUE(ResolveModel(hybrid, &m).ok());
  config::ModelConfig hybrid_echo;
  EchoModel(m, &hybrid_echo);
  EXPECT_EQ(hybrid_echo.hybrid_override_pattern().size(), 118u);
  EXPECT_EQ(hybrid_echo.mamba_state_dim(), 256);
  EXPECT_FALSE(plain.has_hybrid_override_pattern());
  models::TransformerConfig again;
  ASSERT_TRUE(ResolveModel(hybrid_echo, &again).ok());
  EXPECT_EQ(again.hybrid_pattern, m.hybrid_pattern);
  EXPECT_EQ(again.mamba_num_heads, 256);
  hybrid.set_num_layers(60);
  EXPECT_THAT(ResolveModel(hybrid, &m).message(), HasSubstr("hybrid_override_pattern has 118"));
}

// Restating a preset's hidden size or head count keeps its FFN width and
// grouped-query attention; a different value re-derives them (4 x hidden,
// one query group per head) unless those are stated too.
TEST(ResolveModelTest, RestatingAPresetsShapeKeepsItsFfnAndQueryGroups) {
  config::ModelConfig in;
  in.set_preset("llama3-70b");
  in.set_hidden_size(8192);
  in.set_num_attention_heads(64);
  models::TransformerConfig m;
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.ffn_hidden_size, 28672);
  EXPECT_EQ(m.num_query_groups, 8);

  in.set_hidden_size(4096);
  in.set_num_attention_heads(32);
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.ffn_hidden_size, 4 * 4096);
  EXPECT_EQ(m.num_query_groups, 32);

  in.set_ffn_hidden_size(14336);
  in.set_num_query_groups(8);
  ASSERT_TRUE(ResolveModel(in, &m).ok());
  EXPECT_EQ(m.ffn_hidden_size, 14336);
  EXPECT_EQ(m.num_query_groups, 8);
}

}  // namespace
}  // namespace clustersim::scenarios
