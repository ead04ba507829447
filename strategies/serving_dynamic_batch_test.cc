#include "strategies/serving_dynamic_batch.h"

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

// Whole blocks of `size` tokens (no sliding-window layers).
models::KvFootprint Blocks(int size) { return {.block_size = size}; }

// Each table row applies below its capacity bound, and only there.
TEST(DynamicBatchTest, TableRowsApplyBelowTheirBound) {
  EXPECT_EQ(TunedRuntimeBatchSize(10), 128);
  EXPECT_EQ(TunedRuntimeBatchSize(143), 128);
  EXPECT_EQ(TunedRuntimeBatchSize(144), 256);
  EXPECT_EQ(TunedRuntimeBatchSize(300), 256);
  EXPECT_EQ(TunedRuntimeBatchSize(335), 256);
  EXPECT_EQ(TunedRuntimeBatchSize(336), 512);
  EXPECT_EQ(TunedRuntimeBatchSize(671), 512);
  EXPECT_EQ(TunedRuntimeBatchSize(672), 768);
  EXPECT_EQ(TunedRuntimeBatchSize(831), 768);
  EXPECT_EQ(TunedRuntimeBatchSize(832), 1024);
  EXPECT_EQ(TunedRuntimeBatchSize(1130), 1024);
  EXPECT_EQ(TunedRuntimeBatchSize(1279), 1024);
  EXPECT_EQ(TunedRuntimeBatchSize(1280), 1536);
  EXPECT_EQ(TunedRuntimeBatchSize(1663), 1536);
}

// Above the table: a multiple of 512 when the capacity is less than 128 above
// it, else the capacity itself.
TEST(DynamicBatchTest, AboveTheTableRoundsDownOnlyNearAMultipleOf512) {
  EXPECT_EQ(TunedRuntimeBatchSize(1664), 1664);
  EXPECT_EQ(TunedRuntimeBatchSize(2048), 2048);
  EXPECT_EQ(TunedRuntimeBatchSize(2120), 2048);
  EXPECT_EQ(TunedRuntimeBatchSize(2175), 2048);
  EXPECT_EQ(TunedRuntimeBatchSize(2176), 2176);
  EXPECT_EQ(TunedRuntimeBatchSize(2268), 2268);
}

// A request's blocks are rounded up: 2,000 tokens take 125 blocks of 16 and
// 63 of 32.
TEST(DynamicBatchTest, CapacityCountsWholeBlocksPerRequest) {
  EXPECT_EQ(KvCapacityBatchSize(37575, Blocks(16), 1000, 1000), 300);
  EXPECT_EQ(KvCapacityBatchSize(18787, Blocks(32), 1000, 1000), 298);
  EXPECT_EQ(KvCapacityBatchSize(124, Blocks(16), 1000, 1000), 0);
}

// Under data-parallel attention each rank tunes its share: a cache of 300
// requests a rank is capped at 256 on each, 1,024 on 4 ranks and 2,048 on 8,
// where one tuner over the 8 ranks' whole cache (2,404 requests) would keep
// all 2,404.
TEST(DynamicBatchTest, DataParallelRanksTuneTheirShares) {
  EXPECT_EQ(TunedReplicaBatchSize(37575, Blocks(16), 1000, 1000, 1), 256);
  EXPECT_EQ(TunedReplicaBatchSize(4 * 37575, Blocks(16), 1000, 1000, 4), 4 * 256);
  EXPECT_EQ(TunedReplicaBatchSize(8 * 37575, Blocks(16), 1000, 1000, 8), 8 * 256);
  EXPECT_EQ(TunedRuntimeBatchSize(KvCapacityBatchSize(8 * 37575, Blocks(16), 1000, 1000)), 2404);
}

// With half the layers on a 128-token window, a 2,000-token request holds
// its full layers' 125 blocks and 9 of each windowed layer: 67 whole blocks,
// so the same cache takes 1.87x the requests.
TEST(DynamicBatchTest, SlidingWindowLayersHoldOnlyTheirWindow) {
  const models::KvFootprint windowed{
      .block_size = 16, .window = 128, .full_weight = 1, .window_weight = 1};
  EXPECT_EQ(KvCapacityBatchSize(37575, windowed, 1000, 1000), 37575 * 2 / (125 + 9));
}

}  // namespace
}  // namespace clustersim::strategies
