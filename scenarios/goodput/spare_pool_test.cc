#include "scenarios/goodput/spare_pool.h"

#include <cmath>

#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

TEST(SparePoolTest, FreeSparesReplaceWithoutWaiting) {
  sim::SplitMix64 rng(1);
  SparePool pool(3, 3600);
  EXPECT_EQ(pool.Replace(2, 0, rng), 0);
  EXPECT_EQ(pool.free(), 1);
  EXPECT_EQ(pool.in_repair(), 2);
}

TEST(SparePoolTest, AnEmptyPoolWaitsForTheEarliestRepairs) {
  sim::SplitMix64 rng(2);
  SparePool pool(1, 3600);
  EXPECT_EQ(pool.Replace(1, 0, rng), 0);
  // Two more fail at once (a switch) with the pool empty: both replacements
  // come from the earliest two of the three repairs now under way.
  const double wait = pool.Replace(2, 10, rng);
  EXPECT_GT(wait, 0);
  EXPECT_EQ(pool.free(), 0);
  EXPECT_EQ(pool.in_repair(), 1);
}

TEST(SparePoolTest, RepairedNodesRejoinThePool) {
  sim::SplitMix64 rng(3);
  SparePool pool(1, 1);  // repairs of about a second
  EXPECT_EQ(pool.Replace(1, 0, rng), 0);
  EXPECT_EQ(pool.Replace(1, 1e6, rng), 0);  // long after the repair
  EXPECT_EQ(pool.free(), 0);
}

// With no spares a single failure waits for its own repair: exponential with
// the mean repair time.
TEST(SparePoolTest, NoSparesWaitTheMeanRepairTime) {
  sim::SplitMix64 rng(4);
  double total = 0;
  constexpr int kN = 20000;
  for (int i = 0; i < kN; ++i) {
    SparePool pool(0, 100);
    total += pool.Replace(1, 0, rng);
  }
  EXPECT_NEAR(total / kN, 100, 3);  // standard error 0.7
}

// Failures arrive as a Poisson process while the job runs, each node's repair
// takes an exponential time, and the job stops while it waits: the nodes in
// repair are a birth-death chain on 0..S+1 with P(n) proportional to a^n / n!
// (a = rate x repair), and a failure finds all S spares gone with the Erlang B
// probability (a^S / S!) / sum_{n<=S} a^n / n!.
TEST(SparePoolTest, EmptyPoolOddsAreErlangB) {
  sim::SplitMix64 rng(5), arrivals(6);
  constexpr double kRate = 1.0, kRepair = 1.5;  // a = 1.5
  constexpr int kSpares = 3;
  SparePool pool(kSpares, kRepair);
  double t = 0;
  int waited = 0;
  constexpr int kFailures = 200000;
  for (int i = 0; i < kFailures; ++i) {
    t += -std::log1p(-arrivals.Uniform()) / kRate;
    const double wait = pool.Replace(1, t, rng);
    if (wait > 0) ++waited;
    t += wait;
  }
  const double a = kRate * kRepair;
  double sum = 0, term = 1;
  for (int n = 0; n <= kSpares; ++n) {
    if (n > 0) term *= a / n;
    sum += term;
  }
  // B(3, 1.5) = 0.1343; the standard error of the estimate is about 0.001.
  EXPECT_NEAR(static_cast<double>(waited) / kFailures, term / sum, 0.006);
}

}  // namespace
}  // namespace clustersim::scenarios
