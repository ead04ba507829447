// Context parallelism and FP8 through the whole pipeline (scenario ->
// resolve -> step -> result), on both network tiers.
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim {
namespace {

absl::StatusOr<config::Result> RunCp(const std::string& tier, bool fold) {
  absl::StatusOr<config::Scenario> s = scenarios::ParseScenarioText(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 16 }
    model { preset: "llama3-8b" num_layers: 4 seq_length: 16384 }
    parallelism {
      tensor_model_parallel_size: 2
      context_parallel_size: 4
      sequence_parallel: true
      use_distributed_optimizer: true
      overlap_grad_reduce: true
    }
    training { global_batch_size: 4 precision: "fp8" }
  )pb", "test");
  if (!s.ok()) return s.status();
  s->mutable_network()->set_tier(tier);
  absl::StatusOr<scenarios::ResolvedScenario> r = scenarios::Resolve(*s);
  if (!r.ok()) return r.status();
  return scenarios::RunScenario(*r, {.trace_path = "", .fold_data_parallel = fold});
}

TEST(ContextParallelEndToEndTest, BothTiersFoldExactlyAndReportCpTime) {
  for (const char* tier : {"analytic", "flow"}) {
    absl::StatusOr<config::Result> folded = RunCp(tier, true);
    absl::StatusOr<config::Result> full = RunCp(tier, false);
    ASSERT_TRUE(folded.ok()) << folded.status();
    ASSERT_TRUE(full.ok()) << full.status();
    EXPECT_EQ(folded->step_time_s(), full->step_time_s()) << tier;
    EXPECT_EQ(folded->exposed_comm_breakdown_s().cp_s(), full->exposed_comm_breakdown_s().cp_s())
        << tier;
    EXPECT_GT(folded->exposed_comm_breakdown_s().cp_s(), 0) << tier;
    EXPECT_LT(folded->exposed_comm_breakdown_s().cp_s(), 0.05 * folded->step_time_s()) << tier;
    EXPECT_EQ(folded->scenario().parallelism().data_parallel_size(), 2);
    EXPECT_EQ(folded->scenario().training().precision(), "fp8");
  }
}

}  // namespace
}  // namespace clustersim
