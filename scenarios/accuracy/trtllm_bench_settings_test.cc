#include "scenarios/accuracy/trtllm_bench_settings.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Llama 3.1 8B in FP8 with a 16-bit KV cache on a 131 GiB GPU.
TrtllmBenchModel Llama8bFp8(int input_len, int output_len) {
  return {.params = 8.03e9,
          .layers = 32,
          .kv_heads = 8,
          .head_size = 128,
          .tp = 1,
          .pp = 1,
          .input_len = input_len,
          .output_len = output_len,
          .weight_bytes = 1,
          .kv_bytes = 2,
          .device_memory_gib = 131.0};
}

TEST(TrtllmBenchSettingsTest, MemoryBoundBatchRoundsUp) {
  // By hand: weights 8.03e9 B = 7.4786 GiB; (131 - 7.4786) x 0.95 = 117.345 GiB
  // of KV; a token is 2 x 32 x 8 x 128 x 2 B = 1.2207e-4 GiB, a request of
  // 2000 tokens 0.24414 GiB: 480.6 requests -> 128 x ceil(3.755) = 512;
  // tokens 480.6 x 2 = 961 -> the floor of 2048.
  absl::StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(Llama8bFp8(1000, 1000));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_NEAR(l->kv_cache_max_requests, 480.64, 0.05);
  EXPECT_EQ(l->max_batch_size, 512);
  EXPECT_EQ(l->max_num_tokens, 2048);
}

TEST(TrtllmBenchSettingsTest, ShortRequestsHitTheBatchCap) {
  // 32-token requests: 117.345 / 0.00390625 = 30040 requests, capped at 4096
  // (a multiple of 256); tokens 4096 x 2 = 8192 -> 1024 x 8.
  absl::StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(Llama8bFp8(16, 16));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->max_batch_size, 4096);
  EXPECT_EQ(l->max_num_tokens, 8192);
}

TEST(TrtllmBenchSettingsTest, SmallKvCacheKeepsTheMinimumBatch) {
  // Llama 70B in FP8 on one 80 GiB GPU: weights 65.75 GiB, KV 13.54 GiB, a
  // 2000-token request 0.6104 GiB (80 layers): 22.2 requests -> at least 64.
  TrtllmBenchModel m{.params = 70.6e9,
                     .layers = 80,
                     .kv_heads = 8,
                     .head_size = 128,
                     .tp = 1,
                     .pp = 1,
                     .input_len = 1000,
                     .output_len = 1000,
                     .weight_bytes = 1,
                     .kv_bytes = 2,
                     .device_memory_gib = 80};
  absl::StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(m);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_NEAR(l->kv_cache_max_requests, 22.18, 0.05);
  EXPECT_EQ(l->max_batch_size, 64);
  EXPECT_EQ(l->max_num_tokens, 2048);
}

TEST(TrtllmBenchSettingsTest, PipelineStagesDivideTheBatch) {
  // Medium tokens: 8B, 128 in / 128 out: 117.345 / 0.03125 = 3755 requests,
  // bs 256 x ceil(14.67) = 3840, tokens 7510 -> 512 x 15 = 7680. With pp 2
  // the memory doubles (2 x 131 - 7.48) x 0.95 = 241.80 GiB -> 7737.5
  // requests, capped at 4096 / 2 = 2048 per stage; tokens 4096 -> 512 x 8.
  absl::StatusOr<TrtllmBenchLimits> one = TrtllmBenchSettings(Llama8bFp8(128, 128));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->max_batch_size, 3840);
  EXPECT_EQ(one->max_num_tokens, 7680);
  TrtllmBenchModel two = Llama8bFp8(128, 128);
  two.pp = 2;
  absl::StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(two);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->max_batch_size, 2048);
  EXPECT_EQ(l->max_num_tokens, 4096);
}

TEST(TrtllmBenchSettingsTest, WeightsThatDoNotFitAreAnError) {
  TrtllmBenchModel m = Llama8bFp8(1000, 1000);
  m.params = 405.9e9;
  m.weight_bytes = 2;
  EXPECT_THAT(TrtllmBenchSettings(m).status().message(), HasSubstr("the weights need"));
  m = Llama8bFp8(1000, 1000);
  m.layers = 0;
  EXPECT_FALSE(TrtllmBenchSettings(m).ok());
}

TEST(TrtllmBenchSettingsTest, UnchunkedTokensHoldTheLongestPromptAndABatch) {
  // 512 sequences and 2048 tokens: a 1000-token prompt needs 1000 + 512 =
  // 1512, under the tuned 2048; a 2048-token prompt needs 2560.
  const TrtllmBenchLimits l{.max_batch_size = 512, .max_num_tokens = 2048};
  EXPECT_EQ(TrtllmBenchUnchunkedMaxTokens(l, 1000), 2048);
  EXPECT_EQ(TrtllmBenchUnchunkedMaxTokens(l, 2048), 2560);
}

TEST(TrtllmBenchSettingsTest, CudaGraphsStopAtTheDecodeBatchBound) {
  const std::vector<int> sizes = {1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024};
  // Batch 160 under 2208 tokens: sizes up to 128, then 160 for the padding.
  EXPECT_THAT(CapturedCudaGraphBatchSizes(sizes, 160, 2208, true),
              ElementsAre(1, 2, 4, 8, 16, 32, 64, 128, 160));
  // Without padding the larger sizes are dropped.
  EXPECT_THAT(CapturedCudaGraphBatchSizes(sizes, 160, 2208, false),
              ElementsAre(1, 2, 4, 8, 16, 32, 64, 128));
  // A bound in the list is not repeated; the token limit bounds too.
  EXPECT_THAT(CapturedCudaGraphBatchSizes(sizes, 4096, 256, true),
              ElementsAre(1, 2, 4, 8, 16, 32, 64, 128, 256));
  EXPECT_THAT(CapturedCudaGraphBatchSizes(sizes, 4096, 8192, true), ElementsAre(
                  1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024));
}

}  // namespace
}  // namespace clustersim::scenarios
