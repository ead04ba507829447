#include "strategies/placement.h"

#include <vector>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

TEST(PlacementTest, TensorRanksAreInnermost) {
  ParallelConfig c;
  c.tensor_parallel = 8;
  c.data_parallel = 2;
  Placement p(c);
  EXPECT_EQ(p.world_size(), 16);
  EXPECT_EQ(p.GpuOf({.tp = 3, .dp = 1}), 11);
  EXPECT_EQ(p.TensorGroup(11), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(p.DataGroup(11), (std::vector<int>{3, 11}));
}

TEST(PlacementTest, CoordsRoundTrip) {
  ParallelConfig c;
  c.tensor_parallel = 2;
  c.context_parallel = 2;
  c.data_parallel = 3;
  c.pipeline_parallel = 2;
  Placement p(c);
  for (int g = 0; g < p.world_size(); ++g) EXPECT_EQ(p.GpuOf(p.CoordsOf(g)), g);
  EXPECT_EQ(p.PipelineGroup(1), (std::vector<int>{1, 13}));
}

// Hybrid sharding: shard groups are blocks of consecutive dp indices (with
// every cp rank); replicas share the dp index modulo the block.
TEST(PlacementTest, HybridShardGroupsAreDataParallelBlocks) {
  ParallelConfig c;
  c.tensor_parallel = 2;
  c.context_parallel = 2;
  c.data_parallel = 4;
  Placement p(c);
  // GPU 13: tp 1, cp 0, dp 3.
  EXPECT_EQ(p.DataContextShardGroup(13, 2), (std::vector<int>{9, 11, 13, 15}));
  EXPECT_EQ(p.DataReplicaGroup(13, 2), (std::vector<int>{5, 13}));
  EXPECT_EQ(p.DataContextShardGroup(13, 4), p.DataContextGroup(13));
  EXPECT_EQ(p.DataReplicaGroup(13, 4), (std::vector<int>{13}));
  EXPECT_EQ(p.DataReplicaGroup(13, 1), (std::vector<int>{1, 5, 9, 13}));
}

// Megatron-core: ep is carved out of the data-parallel ranks of a stage, tp
// innermost; the expert-data-parallel group is dp/ep ranks of one expert rank.
TEST(PlacementTest, ExpertGroupsSplitTheDataParallelRanks) {
  ParallelConfig c;
  c.tensor_parallel = 2;
  c.data_parallel = 8;
  c.pipeline_parallel = 2;
  c.expert_parallel = 4;
  Placement p(c);
  EXPECT_EQ(p.ExpertGroup(0), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(p.ExpertDataGroup(0), (std::vector<int>{0, 8}));
  // gpu 27: tp 1, dp 5, pp 1 -> expert rank 1, expert-data rank 1.
  EXPECT_EQ(p.ExpertRankOf(27), 1);
  EXPECT_EQ(p.ExpertDataRankOf(27), 1);
  EXPECT_EQ(p.ExpertGroup(27), (std::vector<int>{25, 27, 29, 31}));
  EXPECT_EQ(p.ExpertDataGroup(27), (std::vector<int>{19, 27}));
  // Every GPU is in exactly one expert group and one expert-data group, and
  // the two intersect in that GPU alone.
  for (int g = 0; g < p.world_size(); ++g) {
    int both = 0;
    for (int x : p.ExpertGroup(g)) {
      for (int y : p.ExpertDataGroup(g)) both += x == y ? 1 : 0;
    }
    EXPECT_EQ(both, 1) << g;
    for (int x : p.ExpertGroup(g)) EXPECT_EQ(p.ExpertGroup(x), p.ExpertGroup(g));
  }
}

TEST(PlacementTest, ExpertGroupsSpanContextRanksFirst) {
  ParallelConfig c;
  c.context_parallel = 2;
  c.data_parallel = 2;
  c.expert_parallel = 4;
  Placement p(c);
  EXPECT_EQ(p.ExpertGroup(1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(p.ExpertDataGroup(1), (std::vector<int>{1}));
}

// MoE parallel folding (expert TP 1): expert groups are ep consecutive GPUs of
// a stage, taking tensor ranks too, so ep may exceed dp.
TEST(PlacementTest, FoldedExpertGroupsSpanTensorRanks) {
  ParallelConfig c;
  c.tensor_parallel = 2;
  c.data_parallel = 4;
  c.pipeline_parallel = 2;
  c.expert_parallel = 8;  // > dp = 4
  c.expert_tensor_parallel = 1;
  Placement p(c);
  EXPECT_EQ(p.ExpertGroup(3), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.ExpertDataGroup(3), (std::vector<int>{3}));
  EXPECT_EQ(p.ExpertGroup(9), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));  // stage 1
  EXPECT_EQ(p.ExpertRankOf(9), 1);
  c.expert_parallel = 2;  // 4 expert-data ranks of the same expert rank
  Placement q(c);
  EXPECT_EQ(q.ExpertGroup(5), (std::vector<int>{4, 5}));
  EXPECT_EQ(q.ExpertDataGroup(5), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(q.ExpertDataRankOf(5), 2);
  for (int g = 0; g < q.world_size(); ++g) {
    int both = 0;
    for (int x : q.ExpertGroup(g)) {
      for (int y : q.ExpertDataGroup(g)) both += x == y ? 1 : 0;
    }
    EXPECT_EQ(both, 1) << g;
  }
}

// Megatron-Core's order tp-cp-dp-pp: tp=2, cp=2, dp=2, pp=2 on 16 GPUs puts
// GPU 5 at tp 1, cp 0, dp 1, pp 0; its ring partner is 2 GPUs away.
TEST(PlacementTest, ContextRanksFollowTensorRanks) {
  const Placement p(ParallelConfig{
      .tensor_parallel = 2, .pipeline_parallel = 2, .context_parallel = 2, .data_parallel = 2});
  const RankCoords r = p.CoordsOf(5);
  EXPECT_EQ(r.tp, 1);
  EXPECT_EQ(r.cp, 0);
  EXPECT_EQ(r.dp, 1);
  EXPECT_EQ(r.pp, 0);
  EXPECT_EQ(p.ContextGroup(5), (std::vector<int>{5, 7}));
  EXPECT_EQ(p.DataGroup(5), (std::vector<int>{1, 5}));
  EXPECT_EQ(p.DataContextGroup(5), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(p.DataContextGroup(13), (std::vector<int>{9, 11, 13, 15}));
}

// The stage group (Megatron's tensor + data + context parallel ranks, where
// FP8 amaxes are reduced) is every rank of the GPU's pipeline stage.
TEST(PlacementTest, StageGroupIsEveryRankOfTheStage) {
  const Placement p(ParallelConfig{
      .tensor_parallel = 2, .pipeline_parallel = 2, .context_parallel = 2, .data_parallel = 2});
  EXPECT_EQ(p.StageGroup(5), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.StageGroup(8), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
}

}  // namespace
}  // namespace clustersim::strategies
