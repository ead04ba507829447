// inference.weight_dtype "fp8-mixed" (Meta's Llama 3 FP8 checkpoints,
// models/quantization.h) through the serve resolver: taken from a Hugging
// Face config.json's fbgemm_fp8 quantization_config when the field is unset,
// and refused with the field named for MoE models and GPUs without FP8.
#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/serve/serve_runner.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

// A 4-layer Llama config.json whose quantization_config keeps every layer's
// attention and the first and last layers' MLP unconverted, as Meta's FP8
// release does.
std::string WriteMetaFp8Config() {
  std::string modules;
  for (int l = 0; l < 4; ++l) {
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      modules += "\"model.layers." + std::to_string(l) + ".self_attn." + p + "\", ";
    }
  }
  for (int l : {0, 3}) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      modules += "\"model.layers." + std::to_string(l) + ".mlp." + p + "\", ";
    }
  }
  const std::string path = ::testing::TempDir() + "/meta-fp8.config.json";
  std::ofstream(path) << R"({"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
      "num_key_value_heads": 8, "intermediate_size": 4096, "vocab_size": 1000,
      "max_position_embeddings": 512, "hidden_act": "silu", "model_type": "llama",
      "rms_norm_eps": 1e-5, "quantization_config": {"activation_scale_ub": 1200.0,
      "quant_method": "fbgemm_fp8", "modules_to_not_convert": [)"
                      << modules << R"("lm_head"]}})";
  return path;
}

config::Scenario Base() {
  config::Scenario s;
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  s.mutable_inference()->mutable_workload()->set_kind("fixed-batch");
  s.mutable_inference()->mutable_workload()->set_batch_size(1);
  s.mutable_model()->set_seq_length(256);
  return s;
}

TEST(ServeFp8MixedTest, ConfigFileStatesTheFormatWhenTheFieldIsUnset) {
  config::Scenario s = Base();
  s.mutable_model()->set_model_config_file(WriteMetaFp8Config());
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->echo.inference().weight_dtype(), "fp8-mixed");
  EXPECT_EQ(r->memory.replica.weight_format, models::WeightFormat::kFp8Mixed);
  // The field, when set, wins.
  s.mutable_inference()->set_weight_dtype("bf16");
  r = ResolveServe(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->echo.inference().weight_dtype(), "bf16");
}

TEST(ServeFp8MixedTest, RefusedForMoeModelsAndGpusWithoutFp8) {
  config::Scenario s = Base();
  s.mutable_model()->set_preset("mixtral-8x7b");
  s.mutable_inference()->set_weight_dtype("fp8-mixed");
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("inference.weight_dtype=fp8-mixed"));
  EXPECT_THAT(r.status().message(), HasSubstr("use fp8 or bf16"));
  s.mutable_model()->set_preset("llama3-8b");
  s.mutable_cluster()->set_gpu("a100-sxm4-80gb");
  r = ResolveServe(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("inference.weight_dtype=fp8-mixed"));
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  EXPECT_TRUE(ResolveServe(s).ok());
}

}  // namespace
}  // namespace clustersim::scenarios
