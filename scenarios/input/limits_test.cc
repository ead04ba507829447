#include "scenarios/input/limits.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace {

config::Scenario Parse(const std::string& text) {
  absl::StatusOr<config::Scenario> s = ParseScenarioText(text, "test");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

TEST(LimitsTest, NamesTheFirstNonFiniteDoubleByItsPath) {
  config::Scenario s = Parse(R"pb(model { preset: "gpt-22b" })pb");
  EXPECT_TRUE(CheckFiniteNumbers(s).ok());
  s.mutable_cluster()->mutable_fabric()->set_oversubscription(std::nan(""));
  absl::Status st = CheckFiniteNumbers(s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("cluster.fabric.oversubscription=nan"), std::string::npos) << st;
  s.mutable_cluster()->mutable_fabric()->set_oversubscription(2);
  s.mutable_pricing()->set_pue(-std::numeric_limits<double>::infinity());
  st = CheckFiniteNumbers(s);
  EXPECT_NE(st.message().find("pricing.pue=-inf"), std::string::npos) << st;
}

TEST(LimitsTest, TheClockLimitIsOnePercentOfTheInt64PicosecondRange) {
  // 2^63 ps = 9.22e6 s (106.75 days); 1% of it is 25.6 hours.
  EXPECT_NEAR(MaxIdealStepSeconds(), 92233.7, 0.1);
}

TEST(LimitsTest, RefusesAStepBeyondTheClockWithTheEstimate) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 8 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 8 }
    training { micro_batch_size: 1 global_batch_size: 1 })pb");
  ASSERT_TRUE(Resolve(s).ok());
  s.mutable_model()->set_seq_length(1000000000);
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("days) of simulated time per step"), std::string::npos)
      << r.status();
}

TEST(LimitsTest, EstimateBoundsTheTasksActuallyBuilt) {
  // Full recompute on tp 8 is the most tasks per layer measured (48.1).
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 8 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 8 }
    training { micro_batch_size: 4 global_batch_size: 32 recompute_granularity: "full" })pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> result = RunScenario(*r, RunOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  const double estimate = EstimatedTasks(*r);
  EXPECT_GE(estimate, result->simulated_tasks());
  // And is not wildly above: 153,600 estimated for 113,904 built (1.35x;
  // 1.04x at 1,024 micro-batches, docs/reliability.md).
  EXPECT_LE(estimate, 1.5 * result->simulated_tasks());
}

TEST(LimitsTest, HundredThousandGpuLlama405bIsAccepted) {
  // Data-parallel replicas are folded: docs/reliability.md quotes this run
  // at 118 s and 232 MB peak.
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 100000 }
    model { preset: "llama3-405b" seq_length: 8192 }
    parallelism {
      tensor_model_parallel_size: 8
      pipeline_model_parallel_size: 10
      first_pipeline_num_layers: 7
      last_pipeline_num_layers: 7
      sequence_parallel: true
      use_distributed_optimizer: true
    }
    training { micro_batch_size: 1 global_batch_size: 10000 })pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(EstimatedTasks(*r) * kBytesPerTask, 1.0 * (1 << 30));
}

TEST(LimitsTest, RefusesATaskGraphBeyondEightGiB) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 8 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 8 }
    training { micro_batch_size: 4 global_batch_size: 65536 })pb"));
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("3.15e+08 tasks and 32.2 GiB"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace clustersim::scenarios
