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

// Skewed routing: each draw gives the 256 experts Gamma popularities of CV
// 1.28 (normalised to their total) and each expert Poisson rows; the busiest
// of the ranks' summed rows, against the negative-binomial expectation, within
// 3% at 8 and 32 ranks.
double DrawnSkewedBusiest(int experts, int top_k, int tokens, int ranks, double cv, int trials,
                          std::mt19937_64* rng) {
  std::gamma_distribution<double> popularity(1.0 / (cv * cv), cv * cv);
  double sum = 0;
  for (int i = 0; i < trials; ++i) {
    std::vector<double> w(experts);
    for (double& x : w) x = popularity(*rng);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    const int per_rank = experts / ranks;
    double busiest = 0;
    for (int r = 0; r < ranks; ++r) {
      double share = 0;
      for (int e = r * per_rank; e < (r + 1) * per_rank; ++e) share += w[e] / total;
      std::poisson_distribution<int64_t> rows(static_cast<double>(tokens) * top_k * share);
      busiest = std::max(busiest, static_cast<double>(rows(*rng)));
    }
    sum += busiest;
  }
  return sum / trials;
}

TEST(ServingMoeRoutingTest, BusiestRankUnderSkewedRouting) {
  std::mt19937_64 rng(5);
  for (const auto& [tokens, ranks] : {std::pair{7168, 8}, std::pair{64, 8}, std::pair{4096, 32}}) {
    const double drawn = DrawnSkewedBusiest(256, 8, tokens, ranks, 1.28, 3000, &rng);
    const double computed = ExpectedMaxRankRows(256, 8, tokens, ranks, 1.28);
    EXPECT_NEAR(computed, drawn, 0.03 * drawn) << tokens << " tokens, " << ranks << " ranks";
  }
  // DeepSeek-R1 at 7,168 tokens on 8 ranks: the busiest rank ~1.3x the mean,
  // against 1.02x under uniform routing.
  const double mean = 7168.0;
  EXPECT_NEAR(ExpectedMaxRankRows(256, 8, 7168, 8, 1.28) / mean, 1.32, 0.02);
  EXPECT_DOUBLE_EQ(ExpectedMaxRankRows(256, 8, 7168, 8, 0), ExpectedMaxRankRows(256, 8, 7168, 8));
  // The source's own setting (blog 4, Table 1: EP 32, 1,024 rows per rank):
  // measured hottest rank 2.56x the mean; the Gamma's lighter tail gives ~2.14x,
  // well above uniform routing's ~1.1x.
  const double ep32 = ExpectedMaxRankRows(256, 8, 4096, 32, 1.28) / 1024.0;
  EXPECT_GT(ep32, 2.0);
  EXPECT_LT(ep32, 2.56);
  EXPECT_LT(ExpectedMaxRankRows(256, 8, 4096, 32) / 1024.0, 1.15);
}

TEST(ServingMoeRoutingTest, ExpertsTheRankRowsTouch) {
  EXPECT_DOUBLE_EQ(ExpectedRankExpertsTouched(32, 1), 1.0);
  EXPECT_NEAR(ExpectedRankExpertsTouched(32, 2), 2 - 1.0 / 32, 1e-12);
  EXPECT_NEAR(ExpectedRankExpertsTouched(32, 5000), 32.0, 1e-9);
  EXPECT_EQ(ExpectedRankExpertsTouched(32, 0), 0);
}

}  // namespace
}  // namespace clustersim::strategies
