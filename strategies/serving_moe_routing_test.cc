#include "strategies/serving_moe_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

// Routes `tokens` tokens, each to `top_k` distinct experts of `experts` drawn
// uniformly (std::shuffle of the expert ids), and returns each expert's rows.
std::vector<int> Route(int experts, int top_k, int tokens, std::mt19937_64* rng) {
  std::vector<int> ids(experts), rows(experts, 0);
  std::iota(ids.begin(), ids.end(), 0);
  for (int t = 0; t < tokens; ++t) {
    std::shuffle(ids.begin(), ids.end(), *rng);
    for (int j = 0; j < top_k; ++j) ++rows[ids[j]];
  }
  return rows;
}

// One token fills one tile of each of its k experts; a batch whose every
// expert always gets the same rows (k = E) pads each to whole tiles.
TEST(ServingMoeRoutingTest, PaddedRowsOfExactLoads) {
  EXPECT_NEAR(ExpectedPaddedRows(8, 2, 1, 128), 2 * 128.0, 1e-9);
  EXPECT_NEAR(ExpectedPaddedRows(4, 4, 100, 128), 4 * 128.0, 1e-9);
  EXPECT_NEAR(ExpectedPaddedRows(4, 4, 129, 128), 4 * 256.0, 1e-9);
  EXPECT_EQ(ExpectedPaddedRows(0, 0, 16, 128), 0);
  EXPECT_EQ(ExpectedPaddedRows(8, 2, 0, 128), 0);
  // Mixtral 8x7B at 700 decode tokens: 175 ± 11 rows per expert, two tiles each.
  EXPECT_NEAR(ExpectedPaddedRows(8, 2, 700, 128), 8 * 256.0, 1.0);
  // Tile 1 pads nothing: the routed rows themselves.
  EXPECT_NEAR(ExpectedPaddedRows(64, 6, 500, 1), 3000.0, 1e-6);
}

// The binomial expectation against routing drawn token by token (top-k without
// replacement), 4,000 seeded draws: within 1%.
TEST(ServingMoeRoutingTest, PaddedRowsMatchDrawnRouting) {
  std::mt19937_64 rng(7);
  const int experts = 8, top_k = 2, tokens = 300, trials = 4000;
  double sum = 0;
  for (int i = 0; i < trials; ++i) {
    for (int rows : Route(experts, top_k, tokens, &rng)) sum += (rows + 127) / 128 * 128;
  }
  const double drawn = sum / trials;
  EXPECT_NEAR(ExpectedPaddedRows(experts, top_k, tokens, 128), drawn, 0.01 * drawn);
}

// The busiest of 8 ranks: one DeepSeek-V3 decode token (8 rows over 8 ranks of
// 32 experts) against routing drawn token by token, within 3%; at 7,168
// tokens the busiest rank is 1-2% above the mean.
TEST(ServingMoeRoutingTest, BusiestRankOfExpertParallelRouting) {
  EXPECT_DOUBLE_EQ(ExpectedMaxRankRows(256, 8, 100, 1), 800.0);
  EXPECT_EQ(ExpectedMaxRankRows(256, 8, 0, 8), 0);
  std::mt19937_64 rng(11);
  const int trials = 20000;
  double sum = 0;
  for (int i = 0; i < trials; ++i) {
    const std::vector<int> rows = Route(256, 8, 1, &rng);
    int busiest = 0;
    for (int r = 0; r < 8; ++r) {
      busiest =
          std::max(busiest, std::accumulate(rows.begin() + 32 * r, rows.begin() + 32 * (r + 1), 0));
    }
    sum += busiest;
  }
  const double drawn = sum / trials, computed = ExpectedMaxRankRows(256, 8, 1, 8);
  EXPECT_NEAR(computed, drawn, 0.03 * drawn);
  EXPECT_GT(computed, 2.0);  // against 1 row per rank on average
  const double large = ExpectedMaxRankRows(256, 8, 7168, 8) / 7168.0;
  EXPECT_GT(large, 1.01);
  EXPECT_LT(large, 1.02);
}

TEST(ServingMoeRoutingTest, ExpertsTheRankRowsTouch) {
  EXPECT_DOUBLE_EQ(ExpectedRankExpertsTouched(32, 1), 1.0);
  EXPECT_NEAR(ExpectedRankExpertsTouched(32, 2), 2 - 1.0 / 32, 1e-12);
  EXPECT_NEAR(ExpectedRankExpertsTouched(32, 5000), 32.0, 1e-9);
  EXPECT_EQ(ExpectedRankExpertsTouched(32, 0), 0);
}

}  // namespace
}  // namespace clustersim::strategies
