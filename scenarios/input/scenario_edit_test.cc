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
  ASSERT_TRUE(SetScenarioField("fp8_recipe=current", &s).ok());
  ASSERT_TRUE(SetScenarioField("offload=40", &s).ok());
  EXPECT_EQ(s.parallelism().tensor_model_parallel_size(), 4);
  EXPECT_EQ(s.parallelism().pipeline_model_parallel_size(), 2);
  EXPECT_TRUE(s.parallelism().use_distributed_optimizer());
  EXPECT_EQ(s.training().recompute_granularity(), "selective");
  EXPECT_EQ(s.training().global_batch_size(), 512);
  EXPECT_DOUBLE_EQ(s.pricing().train_tokens(), 1e12);
  EXPECT_EQ(s.pricing().train_steps(), 1000);
  EXPECT_EQ(s.training().fp8_recipe(), "current");
  EXPECT_EQ(s.training().cpu_offload_layers(), 40);
}

// recompute=block:N is Megatron-Core's --recompute-granularity full
// --recompute-method block --recompute-num-layers N; a later plain
// granularity other than full drops the method.
TEST(ScenarioEditTest, RecomputeAliasTakesAMethodAndLayerCount) {
  config::Scenario s;
  ASSERT_TRUE(SetScenarioField("recompute=block:5", &s).ok());
  EXPECT_EQ(s.training().recompute_granularity(), "full");
  EXPECT_EQ(s.training().recompute_method(), "block");
  EXPECT_EQ(s.training().recompute_num_layers(), 5);
  ASSERT_TRUE(SetScenarioField("recompute=full", &s).ok());
  EXPECT_EQ(s.training().recompute_method(), "block");
  ASSERT_TRUE(SetScenarioField("recompute=selective", &s).ok());
  EXPECT_EQ(s.training().recompute_granularity(), "selective");
  EXPECT_FALSE(s.training().has_recompute_method());
  EXPECT_FALSE(s.training().has_recompute_num_layers());
  ASSERT_TRUE(ApplyAssignments("training.recompute_granularity=full,"
                               "training.recompute_method=uniform,"
                               "training.recompute_num_layers=2",
                               &s)
                  .ok());
  EXPECT_EQ(s.training().recompute_num_layers(), 2);
  for (const char* bad : {"recompute=block:0", "recompute=block:x", "recompute=chunk:2"}) {
    EXPECT_THAT(SetScenarioField(bad, &s).message(), HasSubstr("e.g. recompute=block:5")) << bad;
  }
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
