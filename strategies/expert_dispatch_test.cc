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

}  // namespace
}  // namespace clustersim::strategies
