#include "scenarios/input/scenario_edit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

TEST(ScenarioEditTest, PathsAndAliasesSetTypedFields) {
  config::Scenario s;
  ASSERT_TRUE(ApplyAssignments("tp=4, pp=2,recompute=selective,distopt=true", &s).ok());
  ASSERT_TRUE(SetScenarioField("training.global_batch_size=512", &s).ok());
  ASSERT_TRUE(SetScenarioField("train_tokens=1e12", &s).ok());
  ASSERT_TRUE(SetScenarioField("train_steps=1e3", &s).ok());
  EXPECT_EQ(s.parallelism().tensor_model_parallel_size(), 4);
  EXPECT_EQ(s.parallelism().pipeline_model_parallel_size(), 2);
  EXPECT_TRUE(s.parallelism().use_distributed_optimizer());
  EXPECT_EQ(s.training().recompute_granularity(), "selective");
  EXPECT_EQ(s.training().global_batch_size(), 512);
  EXPECT_DOUBLE_EQ(s.pricing().train_tokens(), 1e12);
  EXPECT_EQ(s.pricing().train_steps(), 1000);
}

TEST(ScenarioEditTest, ErrorsNameTheFieldAndTheChoices) {
  config::Scenario s;
  EXPECT_THAT(SetScenarioField("parallelism.tensor_size=2", &s).message(),
              HasSubstr("has no field \"tensor_size\"; valid: tensor_model_parallel_size"));
  EXPECT_THAT(SetScenarioField("tpp=2", &s).message(), HasSubstr("alias: tp"));
  EXPECT_THAT(SetScenarioField("tp=two", &s).message(), HasSubstr("expected a whole number"));
  EXPECT_THAT(SetScenarioField("distopt=maybe", &s).message(), HasSubstr("true or false"));
  EXPECT_THAT(SetScenarioField("parallelism=2", &s).message(), HasSubstr("is a section"));
  EXPECT_THAT(SetScenarioField("tp", &s).message(), HasSubstr("not field=value"));
  EXPECT_THAT(SetScenarioField("training.lora_target_modules=q_proj", &s).message(),
              HasSubstr("lists cannot be set"));
}

}  // namespace
}  // namespace clustersim::scenarios
