#include "strategies/search_space.h"

#include <optional>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/gpu_catalog.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

models::TransformerConfig Model(const char* name) {
  return *models::ModelCatalog::Default().Find(name);
}

sim::Bytes Memory(const char* gpu) { return (*models::GpuCatalog::Default().Find(gpu))->memory; }

TEST(SearchSpaceTest, EnumeratesEveryDimensionWithoutDuplicates) {
  const std::vector<ParallelConfig> all =
      EnumerateStrategies(Model("llama3-70b"), {.num_gpus = 64, .global_batch_size = 128});
  std::set<std::tuple<int, int, int, int, int, int, int, bool, int, Schedule, int>> seen;
  std::set<int> tps, pps, vps;
  for (const ParallelConfig& c : all) {
    seen.insert({c.tensor_parallel, c.pipeline_parallel, c.virtual_pipeline, c.context_parallel,
                 c.micro_batch_size, static_cast<int>(c.recompute), c.zero_stage,
                 c.distributed_optimizer, c.expert_parallel, c.schedule, c.data_parallel_shard});
    tps.insert(c.tensor_parallel);
    pps.insert(c.pipeline_parallel);
    vps.insert(c.virtual_pipeline);
    EXPECT_EQ(c.sequence_parallel, c.tensor_parallel > 1);
    EXPECT_EQ(c.global_batch_size, 128);
  }
  EXPECT_EQ(seen.size(), all.size());
  EXPECT_EQ(tps, (std::set<int>{1, 2, 4, 8}));     // tp stays in the 8-GPU node
  EXPECT_EQ(pps, (std::set<int>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(vps, (std::set<int>{1, 2, 4}));
}

TEST(SearchSpaceTest, HybridShardingShardsInsideOneNode) {
  // 64 GPUs, 8 per node: tp 2 x pp 2 leaves dp 16, 4 of them in each node.
  std::set<std::tuple<int, int, int>> shards;  // tp, pp, shard
  for (const ParallelConfig& c :
       EnumerateStrategies(Model("llama3-70b"), {.num_gpus = 64, .global_batch_size = 128})) {
    if (c.data_parallel_shard == 0) continue;
    EXPECT_EQ(c.zero_stage, 3);
    EXPECT_EQ(c.data_parallel_shard, 8 / (c.tensor_parallel * c.context_parallel));
    shards.insert({c.tensor_parallel, c.pipeline_parallel, c.data_parallel_shard});
  }
  EXPECT_TRUE(shards.contains({2, 2, 4}));
  EXPECT_TRUE(shards.contains({1, 1, 8}));
  EXPECT_FALSE(shards.contains({8, 1, 1}));  // one rank per node: plain ZeRO-3 replication
  EXPECT_FALSE(shards.contains({1, 8, 8}));  // dp 8 all in one node: full sharding

  ParallelConfig c{.tensor_parallel = 2, .pipeline_parallel = 2, .sequence_parallel = true,
                   .zero_stage = 3, .data_parallel_shard = 4, .micro_batch_size = 1,
                   .global_batch_size = 128, .recompute = models::Recompute::kFull};
  EXPECT_EQ(PruneStrategy(Model("llama3-8b"), Memory("h100-sxm5-80gb"), {}, 64, &c).reason, "");
  EXPECT_EQ(c.data_parallel, 16);

  for (const ParallelConfig& m :
       EnumerateStrategies(Model("mixtral-8x7b"), {.num_gpus = 64, .global_batch_size = 128})) {
    EXPECT_EQ(m.data_parallel_shard, 0);  // hybrid sharding of experts is not simulated
  }
}

TEST(SearchSpaceTest, PrunesByRuleUnsupportedFeatureAndMemory) {
  const models::TransformerConfig m = Model("llama3-70b");
  ParallelConfig ok{.tensor_parallel = 8, .pipeline_parallel = 4, .sequence_parallel = true,
                    .distributed_optimizer = true, .micro_batch_size = 1,
                    .global_batch_size = 64, .recompute = models::Recompute::kSelective};
  EXPECT_EQ(PruneStrategy(m, Memory("h100-sxm5-80gb"), {}, 64, &ok).reason, "");
  EXPECT_EQ(ok.data_parallel, 2);

  ParallelConfig cp = ok;
  cp.context_parallel = 2;
  EXPECT_EQ(PruneStrategy(m, Memory("h100-sxm5-80gb"), {}, 64, &cp).reason, "");

  // ZeRO-3 on a mixture-of-experts model is simulated (strategies/step_builder.h).
  ParallelConfig zero3{.tensor_parallel = 2, .pipeline_parallel = 4, .sequence_parallel = true,
                       .zero_stage = 3, .micro_batch_size = 1, .global_batch_size = 64,
                       .recompute = models::Recompute::kFull};
  EXPECT_EQ(PruneStrategy(Model("mixtral-8x7b"), Memory("h100-sxm5-80gb"), {}, 64, &zero3).reason,
            "");

  ParallelConfig vp = ok;
  vp.virtual_pipeline = 3;  // 80 layers do not split into 4 x 3 chunks
  vp.schedule = Schedule::kInterleaved1F1B;
  const Pruning bad = PruneStrategy(m, Memory("h100-sxm5-80gb"), {}, 64, &vp);
  EXPECT_THAT(bad.reason, HasSubstr("invalid: "));

  ParallelConfig big = ok;  // 70B unsharded: 16 B/param of model states alone
  big.tensor_parallel = 1;
  big.pipeline_parallel = 1;
  big.sequence_parallel = false;
  big.distributed_optimizer = false;
  const Pruning mem = PruneStrategy(m, Memory("h100-sxm5-80gb"), {}, 64, &big);
  EXPECT_THAT(mem.reason, HasSubstr("memory: "));
  EXPECT_THAT(mem.detail, HasSubstr("of 80.0 GiB"));
}

// Llama 2 70B at an 8,192-token context, tp 4, pp 4, dp 4, micro-batch 1:
// 81.4 GiB without recompute. Its block variant recomputes one layer of each
// chunk and fits; under zb-h1, or when even full recompute would not fit,
// there is none.
TEST(SearchSpaceTest, BlockRecomputeVariantOfAStrategyJustOverMemory) {
  models::TransformerConfig m = Model("llama2-70b");
  m.seq_length = 8192;
  const sim::Bytes gpu = Memory("h100-sxm5-80gb");
  ParallelConfig over{.tensor_parallel = 4, .pipeline_parallel = 4, .sequence_parallel = true,
                      .distributed_optimizer = true, .micro_batch_size = 1,
                      .global_batch_size = 64};
  const Pruning why = PruneStrategy(m, gpu, {}, 64, &over);
  ASSERT_EQ(why.reason, "memory: activations");
  // The remedies already bisected the block count; the variant reuses it and
  // agrees with a fresh bisection.
  EXPECT_TRUE(why.memory.block_recompute_tried);
  EXPECT_EQ(why.memory.block_recompute_layers, 1);
  const std::optional<ParallelConfig> block = BlockRecomputeVariant(m, gpu, {}, 64, over, why);
  const std::optional<ParallelConfig> fresh = BlockRecomputeVariant(m, gpu, {}, 64, over, {});
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->recompute_num_layers, 1);
  ASSERT_TRUE(block.has_value());
  EXPECT_EQ(block->recompute, models::Recompute::kFull);
  EXPECT_EQ(block->recompute_method, models::RecomputeMethod::kBlock);
  EXPECT_EQ(block->recompute_num_layers, 1);
  EXPECT_EQ(block->data_parallel, 4);
  ParallelConfig check = *block;
  EXPECT_EQ(PruneStrategy(m, gpu, {}, 64, &check).reason, "");

  ParallelConfig zb = over;
  zb.schedule = Schedule::kZeroBubbleH1;
  const Pruning zb_why = PruneStrategy(m, gpu, {}, 64, &zb);
  ASSERT_EQ(zb_why.reason, "memory: activations");
  EXPECT_FALSE(zb_why.memory.block_recompute_tried);
  EXPECT_EQ(BlockRecomputeVariant(m, gpu, {}, 64, zb, zb_why), std::nullopt);
  EXPECT_THAT(zb_why.detail, HasSubstr("enable full recompute"));

  ParallelConfig unsharded = over;  // 16 B/param of model states on one GPU
  unsharded.tensor_parallel = 1;
  unsharded.pipeline_parallel = 1;
  unsharded.sequence_parallel = false;
  const Pruning unsharded_why = PruneStrategy(m, gpu, {}, 64, &unsharded);
  ASSERT_THAT(unsharded_why.reason, HasSubstr("memory: "));
  EXPECT_EQ(BlockRecomputeVariant(m, gpu, {}, 64, unsharded, unsharded_why), std::nullopt);
}

}  // namespace
}  // namespace clustersim::strategies
