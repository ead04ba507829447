// A hybrid Mamba-Transformer model's step: each layer runs its own kind's ops
// (Workload::OpListIndex), in the whole backward, the zero-bubble schedule's
// split input and weight gradients, and block recompute's kept lists.
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "strategies/step_builder.h"
#include "strategies/step_builder_test_util.h"

namespace clustersim::strategies {
namespace {

// Four layers, one of each kind but MoE: Mamba, attention, MLP, Mamba.
models::TransformerConfig SmallHybrid() {
  models::TransformerConfig m = SmallGpt();
  m.hybrid_pattern = "M*-M";
  m.mamba_num_heads = 32;
  m.mamba_head_dim = 64;
  m.mamba_state_dim = 64;
  m.mamba_num_groups = 4;
  return m;
}

ParallelConfig TwoStages() {
  ParallelConfig p;
  p.pipeline_parallel = 2;
  p.micro_batch_size = 1;
  p.global_batch_size = 4;
  return p;
}

// Op names each layer ran in `phase`.
std::map<int, std::set<std::string>> OpsByLayer(const StepPlan& plan, Phase phase) {
  std::map<int, std::set<std::string>> ops;
  for (const TaskInfo& info : plan.infos) {
    if (info.op != nullptr && info.phase == phase && info.layer >= 0) {
      ops[info.layer].insert(info.op->name);
    }
  }
  return ops;
}

TEST(HybridStepTest, EachLayerRunsItsKindsOps) {
  FixedNetwork net;
  const models::TransformerConfig model = SmallHybrid();
  const SimRun run = Simulate(model, TwoStages(), 2, true, net);
  std::map<int, std::set<std::string>> fwd = OpsByLayer(run.plan, Phase::kForward);
  EXPECT_TRUE(fwd[0].contains("mamba_in_proj_gemm"));
  EXPECT_TRUE(fwd[0].contains("mamba_chunk_scan"));
  EXPECT_FALSE(fwd[0].contains("qkv_gemm"));
  EXPECT_TRUE(fwd[1].contains("qkv_gemm"));
  EXPECT_FALSE(fwd[1].contains("fc1_gemm"));
  EXPECT_TRUE(fwd[2].contains("fc1_gemm"));
  EXPECT_FALSE(fwd[2].contains("mamba_in_proj_gemm"));
  EXPECT_TRUE(fwd[3].contains("mamba_out_proj_gemm"));
  std::map<int, std::set<std::string>> bwd = OpsByLayer(run.plan, Phase::kBackward);
  EXPECT_TRUE(bwd[3].contains("mamba_chunk_state_bwd_db"));
  EXPECT_TRUE(bwd[1].contains("attention_bwd"));
  EXPECT_GT(run.summary.step_time, sim::Duration::Zero());
}

TEST(HybridStepTest, ZeroBubbleSplitsEachKindsWeightGradients) {
  FixedNetwork net;
  const models::TransformerConfig model = SmallHybrid();
  ParallelConfig p = TwoStages();
  p.schedule = Schedule::kZeroBubbleH1;
  const SimRun run = Simulate(model, p, 2, true, net);
  std::map<int, std::set<std::string>> weight = OpsByLayer(run.plan, Phase::kBackwardWeight);
  EXPECT_TRUE(weight[0].contains("mamba_in_proj_gemm_wgrad"));
  EXPECT_FALSE(weight[0].contains("mamba_in_proj_gemm_dgrad"));
  EXPECT_TRUE(weight[1].contains("qkv_gemm_wgrad"));
  EXPECT_TRUE(weight[2].contains("fc2_gemm_wgrad"));
  std::map<int, std::set<std::string>> input = OpsByLayer(run.plan, Phase::kBackward);
  EXPECT_TRUE(input[0].contains("mamba_in_proj_gemm_dgrad"));
  EXPECT_FALSE(input[0].contains("mamba_in_proj_gemm_wgrad"));
}

TEST(HybridStepTest, BlockRecomputeKeepsEachKindsList) {
  FixedNetwork net;
  const models::TransformerConfig model = SmallHybrid();
  ParallelConfig p = TwoStages();
  p.recompute = models::Recompute::kFull;
  p.recompute_method = models::RecomputeMethod::kBlock;
  p.recompute_num_layers = 1;
  const SimRun run = Simulate(model, p, 2, true, net);
  std::set<int> replayed;
  for (const TaskInfo& info : run.plan.infos) {
    if (info.op != nullptr && info.op->recompute && info.phase == Phase::kBackward) {
      replayed.insert(info.layer);
    }
  }
  EXPECT_EQ(replayed, (std::set<int>{0, 2}));  // the first layer of each chunk
  // The layers it leaves out still run their own kind's backward.
  std::map<int, std::set<std::string>> bwd = OpsByLayer(run.plan, Phase::kBackward);
  EXPECT_TRUE(bwd[1].contains("qkv_gemm_dgrad"));
  EXPECT_TRUE(bwd[3].contains("mamba_in_proj_gemm_dgrad"));
}

}  // namespace
}  // namespace clustersim::strategies
