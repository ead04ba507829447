// Resolve (resolve.h) of activation recompute: the granularities
// "selective+mlp_up" and "selective+op" and training.recompute_modules, each
// echoed, ordered against selective and full by step time, and refused
// naming the field where they do not apply.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/resolve_testing.h"

namespace clustersim::scenarios {
namespace {

using resolve_testing::Parse;
using resolve_testing::StepSeconds;

// recompute_granularity "selective+mlp_up" replays fc1 in every layer's
// backward on top of the attention core (slower than selective alone, faster
// than full) and is echoed; on routed experts it names the field.
TEST(ResolveTest, SelectiveWithMlpUpSitsBetweenSelectiveAndFull) {
  auto with = [](const char* granularity) {
    config::Scenario s = Parse(R"pb(
      cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
      model { preset: "llama2-7b" }
      parallelism { tensor_model_parallel_size: 2 }
      training { micro_batch_size: 1 global_batch_size: 8 }
    )pb");
    s.mutable_training()->set_recompute_granularity(granularity);
    return s;
  };
  const double selective = StepSeconds(with("selective"));
  const double mlp_up = StepSeconds(with("selective+mlp_up"));
  EXPECT_LT(selective, mlp_up);
  EXPECT_LT(mlp_up, StepSeconds(with("full")));
  absl::StatusOr<ResolvedScenario> r = Resolve(with("selective+mlp_up"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->parallel.recompute_mlp_up);
  EXPECT_EQ(r->parallel.recompute, models::Recompute::kSelective);
  EXPECT_EQ(r->echo.training().recompute_granularity(), "selective+mlp_up");
  config::Scenario moe = with("selective+mlp_up");
  moe.mutable_model()->set_preset("mixtral-8x7b");
  absl::StatusOr<ResolvedScenario> e = Resolve(moe);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("training.recompute_granularity"), std::string::npos)
      << e.status();
}

// An 8-GPU H100 run of `preset` (micro-batch 1, global batch 8) under the
// given recompute granularity and modules.
config::Scenario RecomputeScenario(const std::string& preset, const std::string& granularity,
                                   const std::vector<std::string>& modules) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    training { micro_batch_size: 1 global_batch_size: 8 }
  )pb");
  s.mutable_model()->set_preset(preset);
  s.mutable_training()->set_recompute_granularity(granularity);
  for (const std::string& m : modules) s.mutable_training()->add_recompute_modules(m);
  return s;
}

// recompute_granularity "selective+op" (torchtitan's per-op policy) replays
// three of a Llama block's seven matmuls and no attention: slower than
// Megatron's selective here, faster than full; echoed; Megatron's module list
// beside it is refused naming the field.
TEST(ResolveTest, SelectiveOpIsTorchtitansPerOpPolicy) {
  auto with = [](const char* granularity) {
    return RecomputeScenario("llama3-8b", granularity, {});
  };
  const double op = StepSeconds(with("selective+op"));
  EXPECT_LT(StepSeconds(with("selective")), op);
  EXPECT_LT(op, StepSeconds(with("full")));
  absl::StatusOr<ResolvedScenario> r = Resolve(with("selective+op"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->parallel.recompute_op_sac);
  EXPECT_FALSE(r->parallel.recompute_modules.core_attn);
  EXPECT_EQ(r->echo.training().recompute_granularity(), "selective+op");
  EXPECT_EQ(r->echo.training().recompute_modules_size(), 0);
  config::Scenario modules = with("selective+op");
  modules.mutable_training()->add_recompute_modules("mlp");
  absl::StatusOr<ResolvedScenario> e = Resolve(modules);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("training.recompute_modules"), std::string::npos)
      << e.status();
}

TEST(ResolveTest, RecomputeModulesReplaceTheDefaultAndNameTheFieldWhenBad) {
  auto with = [](const std::string& granularity, std::vector<std::string> modules) {
    return RecomputeScenario("llama2-7b", granularity, modules);
  };
  absl::StatusOr<ResolvedScenario> r = Resolve(with("selective", {"layernorm", "mlp"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->parallel.recompute_modules.core_attn);
  EXPECT_TRUE(r->parallel.recompute_modules.layernorm);
  EXPECT_TRUE(r->parallel.recompute_modules.mlp);
  EXPECT_EQ(r->echo.training().recompute_modules_size(), 2);
  // Replaying the MLP costs more than no recompute.
  EXPECT_LT(StepSeconds(with("none", {})), StepSeconds(with("selective", {"layernorm", "mlp"})));
  absl::StatusOr<ResolvedScenario> def = Resolve(with("selective", {}));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_TRUE(def->parallel.recompute_modules.core_attn);
  // The echo names the modules replayed: Megatron's default, and none without
  // selective recompute.
  ASSERT_EQ(def->echo.training().recompute_modules_size(), 1);
  EXPECT_EQ(def->echo.training().recompute_modules(0), "core_attn");
  EXPECT_EQ(Resolve(with("none", {}))->echo.training().recompute_modules_size(), 0);
  for (const config::Scenario& bad :
       {with("selective", {"core_attn", "attn"}), with("none", {"core_attn"})}) {
    absl::StatusOr<ResolvedScenario> e = Resolve(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find("training.recompute_modules"), std::string::npos)
        << e.status();
  }
}

}  // namespace
}  // namespace clustersim::scenarios
