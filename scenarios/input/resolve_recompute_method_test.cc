// Resolve (resolve.h) of training.recompute_method and recompute_num_layers:
// the parallel config and the echo they give, and the input refused naming
// the field.
#include <string>

#include "gtest/gtest.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/resolve_testing.h"

namespace clustersim::scenarios {
namespace {

using resolve_testing::Parse;

config::Scenario Llama(const char* granularity) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "llama3-8b" }
    parallelism { pipeline_model_parallel_size: 2 }
    training { micro_batch_size: 1 global_batch_size: 8 }
  )pb");
  s.mutable_training()->set_recompute_granularity(granularity);
  return s;
}

std::string Error(const config::Scenario& s) {
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(ResolveRecomputeMethodTest, FullRecomputeTakesTheMethodAndEchoesIt) {
  absl::StatusOr<ResolvedScenario> plain = Resolve(Llama("full"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->parallel.recompute_method, models::RecomputeMethod::kUniform);
  EXPECT_EQ(plain->parallel.recompute_num_layers, 1);
  EXPECT_FALSE(plain->echo.training().has_recompute_method());  // shipped scenarios unchanged
  config::Scenario block = Llama("full");
  block.mutable_training()->set_recompute_method("block");
  block.mutable_training()->set_recompute_num_layers(5);
  absl::StatusOr<ResolvedScenario> r = Resolve(block);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.recompute_method, models::RecomputeMethod::kBlock);
  EXPECT_EQ(r->parallel.recompute_num_layers, 5);
  EXPECT_EQ(r->echo.training().recompute_method(), "block");
  EXPECT_EQ(r->echo.training().recompute_num_layers(), 5);
  config::Scenario layers_only = Llama("full");
  layers_only.mutable_training()->set_recompute_num_layers(4);
  r = Resolve(layers_only);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->echo.training().recompute_method(), "uniform");
}

TEST(ResolveRecomputeMethodTest, RefusesWhatMegatronDoesNotRun) {
  config::Scenario selective = Llama("selective");
  selective.mutable_training()->set_recompute_method("block");
  EXPECT_NE(Error(selective).find("training.recompute_method needs"), std::string::npos);
  config::Scenario unknown = Llama("full");
  unknown.mutable_training()->set_recompute_method("blocks");
  EXPECT_NE(Error(unknown).find("\"uniform\" or \"block\""), std::string::npos);
  config::Scenario zero = Llama("full");
  zero.mutable_training()->set_recompute_num_layers(0);
  EXPECT_NE(Error(zero).find("training.recompute_num_layers=0"), std::string::npos);
  config::Scenario zb = Llama("full");
  zb.mutable_training()->set_recompute_method("block");
  zb.mutable_parallelism()->set_pipeline_schedule("zb-h1");
  EXPECT_NE(Error(zb).find("training.recompute_method=\"block\""), std::string::npos);
}

}  // namespace
}  // namespace clustersim::scenarios
