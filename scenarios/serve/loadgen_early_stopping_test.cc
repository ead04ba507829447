// MLPerf LoadGen's early stopping: the over-limit allowance of a run and the
// replica-share test.
#include "scenarios/serve/loadgen_early_stopping.h"

#include <vector>

#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

// Under 459 queries even none over the limit fails (0.99^458 > 0.01), as
// loadgen's "Need to process at least ... queries".
TEST(LoadgenEarlyStoppingTest, ShortRunsCannotPass) {
  EXPECT_EQ(LoadgenMaxOverLatency(0), -1);
  EXPECT_EQ(LoadgenMaxOverLatency(458), -1);
  EXPECT_EQ(LoadgenMaxOverLatency(459), 0);
}

// 45,000 queries may have 401 over the limit (0.89%, about p99.1), fewer than
// the 450 a plain p99 allows; the allowance grows with the run.
TEST(LoadgenEarlyStoppingTest, AllowanceBelowOnePercent) {
  EXPECT_EQ(LoadgenMaxOverLatency(45000), 401);
  const int64_t big = LoadgenMaxOverLatency(200000);
  EXPECT_LT(big, 2000);
  EXPECT_GT(big, 1850);
}

// A replica passes when its share of over-limit queries is within the run's.
TEST(LoadgenEarlyStoppingTest, ReplicaShareOfTheAllowance) {
  std::vector<double> lat(1000, 10.0);
  for (int i = 0; i < 9; ++i) lat[i] = 50.0;  // 0.9% over 20 ms
  // The run: 45 such replicas, 45,000 queries, 401 allowed (0.891%): fails.
  EXPECT_FALSE(MeetsLoadgenEarlyStopping(lat, 20.0, 45000));
  lat[0] = 10.0;  // 0.8%: passes
  EXPECT_TRUE(MeetsLoadgenEarlyStopping(lat, 20.0, 45000));
  // Too short a run for the test: p99 alone decides.
  EXPECT_TRUE(MeetsLoadgenEarlyStopping(lat, 5.0, 400));
}

}  // namespace
}  // namespace clustersim::scenarios
