// Folding on the flow network tier: the folded run's step time against the
// unfolded one where the folded ranks' traffic shares fabric links.
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim {
namespace {

// GPT-3 6.7B on `gpus` H100 (DGX H100 servers on a rail-optimised two-tier
// fat-tree, 32 servers per leaf), micro-batch 1, global batch 128, flow tier.
scenarios::ResolvedScenario Gpt7b(int gpus, int tp, int pp) {
  absl::StatusOr<config::Scenario> s = scenarios::ParseScenarioJson(
      absl::StrCat(R"({"cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": )", gpus, R"(},
        "model": {"preset": "gpt3-6.7b"},
        "parallelism": {"tensor_model_parallel_size": )",
                   tp, R"(, "pipeline_model_parallel_size": )", pp, R"(},
        "training": {"micro_batch_size": 1, "global_batch_size": 128},
        "network": {"tier": "flow"}})"),
      "flow_folding_test");
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  absl::StatusOr<scenarios::ResolvedScenario> r = scenarios::Resolve(*s);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  return *std::move(r);
}

// Folded (the defaults) and unfolded (--no-fold) runs of `r`.
struct Runs {
  config::Result folded, full;
};
Runs FoldedAndUnfolded(const scenarios::ResolvedScenario& r) {
  absl::StatusOr<config::Result> folded = scenarios::RunScenario(r, {});
  scenarios::RunOptions no_fold;
  no_fold.fold_data_parallel = false;
  no_fold.fold_tensor_parallel_above_gpus = std::numeric_limits<int>::max();
  absl::StatusOr<config::Result> full = scenarios::RunScenario(r, no_fold);
  EXPECT_TRUE(folded.ok()) << folded.status();
  EXPECT_TRUE(full.ok()) << full.status();
  if (!folded.ok() || !full.ok()) return {};
  return {*std::move(folded), *std::move(full)};
}

// tp 8, pp 4, dp 16 on 512 GPUs (two leaves per rail, 8 micro-batches): the
// sends between stages 1 and 2 leave their leaf, and the 16 replicas' sends
// on each rail meet on hashed leaf uplinks and spines.
TEST(FlowFoldingTest, FoldedStepTimeMatchesUnfoldedWithSharedFabricLinks) {
  const Runs runs = FoldedAndUnfolded(Gpt7b(512, 8, 4));
  const config::Result* folded = &runs.folded;
  const config::Result* full = &runs.full;
  ASSERT_GT(full->step_time_s(), 0);
  std::printf("512 GPUs, flow tier: folded %.6f s (%.0f tasks), unfolded %.6f s (%.0f tasks)\n",
              folded->step_time_s(), folded->simulated_tasks(), full->step_time_s(),
              full->simulated_tasks());
  // Pipeline sends cross the fabric here: without the other replicas' and
  // ranks' sends, the folded run was 3.4% fast.
  EXPECT_NEAR(folded->step_time_s() / full->step_time_s(), 1.0, 0.01);
  // The tensor-parallel fold still applies.
  EXPECT_LT(folded->simulated_tasks(), full->simulated_tasks() / 4);
}

// 128 GPUs on servers with 2 NICs for 8 GPUs (one per PCIe switch), tp 8,
// pp 4, dp 4: each NIC carries the gradient rings and pipeline sends of four
// tensor-parallel ranks. Folded to rank 0, the run once saw a quarter of that
// load and was 34% fast.
TEST(FlowFoldingTest, FoldedRanksLoadTheNicsTheyShare) {
  absl::StatusOr<config::Scenario> s = scenarios::ParseScenarioJson(R"({
    "cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": 128,
      "custom_node": {"gpus_per_node": 8, "gpu_link": "nvlink4", "nvls": true,
        "pcie": "pcie5-x16", "pcie_switches": 2, "nics": 2, "nic_link": "ib-ndr"}},
    "model": {"preset": "gpt3-6.7b"},
    "parallelism": {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 4},
    "training": {"micro_batch_size": 1, "global_batch_size": 32},
    "network": {"tier": "flow"}})",
                                                                    "flow_folding_test");
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<scenarios::ResolvedScenario> r = scenarios::Resolve(*s);
  ASSERT_TRUE(r.ok()) << r.status();
  const Runs runs = FoldedAndUnfolded(*r);
  ASSERT_GT(runs.full.step_time_s(), 0);
  EXPECT_NEAR(runs.folded.step_time_s() / runs.full.step_time_s(), 1.0, 0.01);
  EXPECT_LT(runs.folded.simulated_tasks() * 4, runs.full.simulated_tasks());
}

// tp 8, pp 1 on 128 GPUs: a replica's tensor-parallel collectives stay in
// its server and only the gradient reduction (run over the whole group)
// crosses the fabric, so no replica's traffic is missing and the replica
// fold is kept.
TEST(FlowFoldingTest, ReplicaFoldIsKeptWhenReplicasShareNoLink) {
  const Runs runs = FoldedAndUnfolded(Gpt7b(128, 8, 1));
  const config::Result* folded = &runs.folded;
  const config::Result* full = &runs.full;
  ASSERT_GT(full->step_time_s(), 0);
  EXPECT_EQ(folded->step_time_s(), full->step_time_s());
  // One replica's tensor-parallel rank 0: 1 of 128 GPUs.
  EXPECT_LT(folded->simulated_tasks() * 64, full->simulated_tasks());
}

}  // namespace
}  // namespace clustersim
