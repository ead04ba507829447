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

}  // namespace
}  // namespace clustersim::scenarios
