#include "strategies/serving_prefix_cache.h"

#include <vector>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

TEST(PrefixHitRateTest, CachesTheFractionOfEachPromptButNotTheLastToken) {
  std::vector<ServingRequest> r = {
      {sim::Time::Zero(), 1024, 8}, {sim::Time::Zero(), 10, 8}, {sim::Time::Zero(), 1, 8}};
  ApplyPrefixHitRate(0.5, &r);
  EXPECT_EQ(r[0].cached_tokens, 512);
  EXPECT_EQ(r[1].cached_tokens, 5);
  EXPECT_EQ(r[2].cached_tokens, 0);
  ApplyPrefixHitRate(0.3, &r);
  EXPECT_EQ(r[1].cached_tokens, 3);  // floor(3.0)
  ApplyPrefixHitRate(1.0, &r);
  EXPECT_EQ(r[0].cached_tokens, 1023);
  EXPECT_EQ(r[1].cached_tokens, 9);
}

// An LRU of 4 blocks, worked by hand (front = most recent; a request touches
// its ids last first, so its first id ends most recent):
//   [1 2 3]  hits 0          cache 1 2 3
//   [1 2 5]  hits 2 (1, 2)   cache 1 2 5 3
//   [1 6]    hits 1          6 evicts 3: cache 1 6 2 5
//   [3 1]    hits 0 (3 gone; 1 after a miss does not count)  3 evicts 5: 3 1 6 2
//   [2 5]    hits 1 (5 gone) 5 evicts 6: 2 5 3 1
//   [1]      hits 1          cache 1 2 5 3
TEST(PrefixBlockCacheTest, LruHitsWorkedByHand) {
  PrefixBlockCache c(4);
  const std::vector<std::vector<int64_t>> ids = {{1, 2, 3}, {1, 2, 5}, {1, 6}, {3, 1}, {2, 5}, {1}};
  const std::vector<int64_t> hits = {0, 2, 1, 0, 1, 1};
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(c.LookupAndTouch(ids[i]), hits[i]) << i;
    EXPECT_LE(c.size(), 4);
  }
  // Cached tokens: hits x 512, at most prompt - 1.
  std::vector<ServingRequest> r;
  for (int64_t prompt : {1536, 1536, 1000, 1024, 600, 512}) {
    r.push_back({sim::Time::Zero(), prompt, 4});
  }
  ApplyPrefixBlockCache(ids, 512, 4, &r);
  const std::vector<int64_t> cached = {0, 1024, 512, 0, 512, 511};
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i].cached_tokens, cached[i]) << i;
  ApplyPrefixBlockCache(ids, 512, 0, &r);
  for (const ServingRequest& q : r) EXPECT_EQ(q.cached_tokens, 0);
}

// What the scheduler sees of the cached tokens: with a hit rate of 0.5 the
// prefill computes half the tokens, over the same context (Σ context + new =
// the prompt) and in the same KV blocks.
// 3,200 blocks of 16 tokens hold 100 hash blocks of 512 tokens. With half
// the KV bytes in 128-token windowed layers, a cached hash block keeps 512
// tokens of the full layers and 128 of the windowed ones (640 of 1,024
// token-units), so the same pool holds 160.
TEST(PrefixCacheCapacityTest, WindowedLayersKeepOnlyTheirTail) {
  SchedulerConfig config;
  config.kv_blocks = 3'200;
  EXPECT_EQ(PrefixCacheCapacity(config, 512), 100);
  config.sliding_window = 128;
  config.kv_full_weight = 1;
  config.kv_window_weight = 1;
  EXPECT_EQ(PrefixCacheCapacity(config, 512), 160);
}

TEST(PrefixHitRateTest, HalfTheHitsHalveThePrefillTokens) {
  IterationTotals seen;
  const IterationCostFn cost = [&seen](const IterationTotals& t) {
    seen.prefill_tokens += t.prefill_tokens;
    seen.prefill_kv_tokens += t.prefill_kv_tokens;
    IterationCost c;
    c.time = sim::Milliseconds(1) + sim::Microseconds(10) * t.tokens;
    return c;
  };
  SchedulerConfig config;
  config.kv_blocks = 10'000;
  std::vector<ServingRequest> r;
  for (int i = 0; i < 20; ++i)
    r.push_back({sim::Time::Zero() + sim::Milliseconds(5 * i), 1024, 16});
  absl::StatusOr<ServingRun> full = SimulateServing(r, config, cost, true);
  ASSERT_TRUE(full.ok()) << full.status();
  const IterationTotals without = seen;
  seen = {};
  ApplyPrefixHitRate(0.5, &r);
  absl::StatusOr<ServingRun> half = SimulateServing(r, config, cost, true);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(without.prefill_tokens, 20 * 1024);
  EXPECT_EQ(seen.prefill_tokens, 20 * 512);
  EXPECT_EQ(seen.prefill_kv_tokens, without.prefill_kv_tokens);
  EXPECT_LT(half->requests[0].first_token, full->requests[0].first_token);
  EXPECT_EQ(half->requests[0].cached_tokens, 512);
  EXPECT_DOUBLE_EQ(PrefixHitRate(half->requests), 0.5);
  EXPECT_DOUBLE_EQ(PrefixHitRate(full->requests), 0.0);
  // The first prompt holds 1024 / 16 = 64 blocks at admission either way.
  EXPECT_EQ(full->iterations.front().kv_blocks_used, 64);
  EXPECT_EQ(half->iterations.front().kv_blocks_used, 64);
}

}  // namespace
}  // namespace clustersim::strategies
