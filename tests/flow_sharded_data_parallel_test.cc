// ZeRO-3 / FSDP collectives on the flow network tier, every replica
// simulated: each group's all-gather, reduce-scatter and (hybrid sharding)
// replica all-reduce reaches the network once, so where no two groups share
// a link the step costs what the analytic tier says.
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim {
namespace {

// GPT-3 13B on `gpus` H100 (DGX H100 servers), ZeRO-3 with parameter shards
// over `shard` data-parallel ranks, micro-batch 1, one sequence per GPU.
double StepTime(int gpus, int shard, const std::string& tier) {
  absl::StatusOr<config::Scenario> s = scenarios::ParseScenarioJson(
      absl::StrCat(R"({"cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": )", gpus, R"(},
        "model": {"preset": "gpt3-13b"},
        "parallelism": {"zero_stage": 3, "data_parallel_shard_size": )", shard, R"(},
        "training": {"micro_batch_size": 1, "global_batch_size": )", gpus, R"(,
                     "recompute_granularity": "full"},
        "network": {"tier": ")", tier, R"("}})"),
      "flow_sharded_data_parallel_test");
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return -1;
  absl::StatusOr<scenarios::ResolvedScenario> r = scenarios::Resolve(*s);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return -1;
  scenarios::RunOptions no_fold;
  no_fold.fold_data_parallel = false;
  no_fold.fold_tensor_parallel_above_gpus = std::numeric_limits<int>::max();
  absl::StatusOr<config::Result> result = scenarios::RunScenario(*r, no_fold);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->step_time_s() : -1;
}

// One server: the eight ranks' per-layer gathers and reduce-scatters are one
// NVLink collective each, alone on their links.
TEST(FlowShardedDataParallelTest, OneServerCostsWhatTheAnalyticTierSays) {
  const double analytic = StepTime(8, 8, "analytic"), flow = StepTime(8, 8, "flow");
  ASSERT_GT(analytic, 0);
  EXPECT_NEAR(flow, analytic, 1e-6 * analytic);
}

// Hybrid sharding over two servers: shards within each server, the gradient
// shard all-reduced between the servers, each rank pair on its own rail NIC.
TEST(FlowShardedDataParallelTest, HybridShardingOverTwoServersCostsWhatTheAnalyticTierSays) {
  const double analytic = StepTime(16, 8, "analytic"), flow = StepTime(16, 8, "flow");
  ASSERT_GT(analytic, 0);
  EXPECT_NEAR(flow, analytic, 0.005 * analytic);
}

}  // namespace
}  // namespace clustersim
