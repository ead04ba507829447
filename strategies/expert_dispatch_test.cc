#include "strategies/expert_dispatch.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

// Every k-subset of the experts, counted: the mean number of bins hit.
double BruteForceDistinct(int experts, int bins, int k) {
  const int per_bin = experts / bins;
  double total = 0;
  int64_t subsets = 0;
  for (uint32_t mask = 0; mask < (1u << experts); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    std::set<int> hit;
    for (int e = 0; e < experts; ++e) {
      if (mask & (1u << e)) hit.insert(e / per_bin);
    }
    total += static_cast<double>(hit.size());
    ++subsets;
  }
  return total / static_cast<double>(subsets);
}

TEST(ExpertDispatchTest, ExpectedDistinctMatchesEnumeration) {
  for (int experts : {8, 12, 16}) {
    for (int bins = 1; bins <= experts; ++bins) {
      if (experts % bins != 0) continue;
      for (int k = 1; k <= 6; ++k) {
        EXPECT_NEAR(ExpectedDistinct(experts, bins, k), BruteForceDistinct(experts, bins, k), 1e-9)
            << experts << " experts, " << bins << " bins, top-" << k;
      }
    }
  }
  // One expert per bin: every pick is its own bin; one bin: always hit.
  EXPECT_DOUBLE_EQ(ExpectedDistinct(256, 256, 8), 8);
  EXPECT_DOUBLE_EQ(ExpectedDistinct(256, 1, 8), 1);
}

TEST(ExpertDispatchTest, ParsesTheDispatchersAndRefusesOthers) {
  for (MoeDispatcher d :
       {MoeDispatcher::kAllToAll, MoeDispatcher::kDeepEp, MoeDispatcher::kHybridEp}) {
    absl::StatusOr<MoeDispatcher> parsed = ParseMoeDispatcher(MoeDispatcherName(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  const absl::StatusOr<MoeDispatcher> bad = ParseMoeDispatcher("flex");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("alltoall, deepep or hybridep"), std::string::npos);
}

// AutoModel's FakeBalancedGate (arange(tokens·k) % E): a token's k experts
// are neighbours. Qwen3-30B-A3B (128 experts, top-8) on 8 ranks of 16 and
// gpt-oss-20b (32, top-4) on 8 ranks of 4: every token on one rank;
// gpt-oss-120b (128, top-4) on 64 ranks of 2: two ranks, on one node of 8.
TEST(ExpertDispatchTest, RoundRobinRoutingKeepsATokensExpertsTogether) {
  EXPECT_DOUBLE_EQ(RoundRobinDistinct(128, 8, 8), 1);
  EXPECT_DOUBLE_EQ(RoundRobinDistinct(32, 8, 4), 1);
  EXPECT_DOUBLE_EQ(RoundRobinDistinct(128, 64, 4), 2);
  EXPECT_DOUBLE_EQ(RoundRobinDistinct(128, 8, 4), 1);
  // Picks that straddle a bin edge: 3 neighbours in bins of 2 start at
  // 0, 3, 6, 1, 4, 7, 2, 5 (mod 8) and span 2, 2, 2, 2, 2, 2, 2, 2 bins.
  EXPECT_DOUBLE_EQ(RoundRobinDistinct(8, 4, 3), 2);
  // Bins of 3 with k = 2 over 6 experts: starts 0, 2, 4 span 1, 2, 1.
  EXPECT_NEAR(RoundRobinDistinct(6, 2, 2), 4.0 / 3, 1e-12);
  // Far fewer bins than the uniform draw reaches.
  EXPECT_GT(ExpectedDistinct(128, 8, 8), 5);
  EXPECT_DOUBLE_EQ(DistinctBins(MoeRouting::kUniform, 128, 8, 8), ExpectedDistinct(128, 8, 8));
  EXPECT_DOUBLE_EQ(DistinctBins(MoeRouting::kRoundRobin, 128, 8, 8), 1);
}

TEST(ExpertDispatchTest, ParsesTheRoutingsAndRefusesOthers) {
  for (MoeRouting r : {MoeRouting::kUniform, MoeRouting::kRoundRobin}) {
    absl::StatusOr<MoeRouting> parsed = ParseMoeRouting(MoeRoutingName(r));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, r);
  }
  const absl::StatusOr<MoeRouting> bad = ParseMoeRouting("balanced");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("uniform or round-robin"), std::string::npos);
}

}  // namespace
}  // namespace clustersim::strategies
