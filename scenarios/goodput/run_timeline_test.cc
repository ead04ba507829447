#include "scenarios/goodput/run_timeline.h"

#include <cmath>

#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

TimelineInputs Base() {
  TimelineInputs in;
  in.compute_s = 10 * 86400.0;
  in.causes = {{"hw", "gpu", 0.5, true, false}, {"sw", "software", 0.25, false, false}};
  in.interval_s = 1800;
  in.stall_s = 60;
  in.restart_s = 600;
  in.planned_down_s = 300;
  in.repair_s = 24 * 3600.0;
  return in;
}

TEST(RunTimelineTest, WithoutFailuresTheRunIsComputePlusCheckpoints) {
  TimelineInputs in = Base();
  in.causes.clear();
  const TimelineStats st = SimulateRuns(in, {.trials = 3, .seed = 7});
  const double checkpoints = std::floor(in.compute_s / in.interval_s) - 1;
  EXPECT_NEAR(st.wall_s[0], in.compute_s + checkpoints * in.stall_s, 1e-3);
  EXPECT_EQ(st.mean_lost_s, 0);
}

TEST(RunTimelineTest, InterruptionsMatchRateTimesWallTime) {
  const TimelineInputs in = Base();
  const TimelineStats st = SimulateRuns(in, {.trials = 200, .seed = 1});
  const double expected = 0.75 * st.mean_wall_s / 3600.0;
  const double got = st.mean_interruptions[0] + st.mean_interruptions[1];
  EXPECT_NEAR(got, expected, 0.03 * expected);
  EXPECT_NEAR(st.mean_interruptions[0] / got, 2.0 / 3.0, 0.03);
  // Lost work per failure is about half an interval (plus the stall).
  EXPECT_NEAR(st.mean_lost_s / got, (in.interval_s + in.stall_s) / 2, 0.1 * in.interval_s);
}

TEST(RunTimelineTest, DeterministicForASeed) {
  const TimelineInputs in = Base();
  const TimelineStats a = SimulateRuns(in, {.trials = 20, .seed = 42, .record_first = true});
  const TimelineStats b = SimulateRuns(in, {.trials = 20, .seed = 42, .record_first = true});
  const TimelineStats c = SimulateRuns(in, {.trials = 20, .seed = 43});
  EXPECT_EQ(a.wall_s, b.wall_s);
  EXPECT_EQ(a.first_trial.size(), b.first_trial.size());
  EXPECT_NE(a.wall_s, c.wall_s);
}

TEST(RunTimelineTest, RepairWaitsOnlyWithoutHotSpares) {
  TimelineInputs in = Base();
  const TimelineStats spares = SimulateRuns(in, {.trials = 50, .seed = 3});
  in.hot_spares = false;
  const TimelineStats repair = SimulateRuns(in, {.trials = 50, .seed = 3});
  EXPECT_EQ(spares.mean_repair_s, 0);
  // About 0.5 hardware failures per hour of running, 24 h each.
  EXPECT_GT(repair.mean_repair_s, 10 * 86400.0);
  EXPECT_GT(repair.mean_wall_s, spares.mean_wall_s + repair.mean_repair_s * 0.9);
}

// A pool too large to run dry replaces every node as the unlimited supply
// does, and its repair draws leave the failures' stream alone.
TEST(RunTimelineTest, ALargeSparePoolIsTheUnlimitedSupply) {
  TimelineInputs in = Base();
  const TimelineStats unlimited = SimulateRuns(in, {.trials = 30, .seed = 9});
  in.spare_nodes = 100000;
  const TimelineStats pool = SimulateRuns(in, {.trials = 30, .seed = 9});
  EXPECT_EQ(pool.wall_s, unlimited.wall_s);
  EXPECT_EQ(pool.mean_spare_waits, 0);
}

// An empty pool waits for every node's repair, as running without hot spares
// does (the repairs are drawn from another stream, so only the means agree).
TEST(RunTimelineTest, AnEmptySparePoolWaitsLikeNoHotSpares) {
  TimelineInputs in = Base();
  in.repair_s = 3600;
  in.spare_nodes = 0;
  const TimelineStats pool = SimulateRuns(in, {.trials = 200, .seed = 4});
  in.spare_nodes = -1;
  in.hot_spares = false;
  const TimelineStats none = SimulateRuns(in, {.trials = 200, .seed = 4});
  EXPECT_NEAR(pool.mean_repair_s, none.mean_repair_s, 0.03 * none.mean_repair_s);
  EXPECT_NEAR(pool.mean_spare_waits, pool.mean_interruptions[0], 1e-9);
  // Two spares, 0.5 node failures per hour, 1-hour repairs: a failure finds
  // the pool dry with the Erlang B probability B(2, 0.5) = 0.125 / 1.625.
  in.hot_spares = true;
  in.spare_nodes = 2;
  const TimelineStats two = SimulateRuns(in, {.trials = 200, .seed = 4});
  EXPECT_NEAR(two.mean_spare_waits / two.mean_interruptions[0], 0.125 / 1.625, 0.015);
}

// A failure that takes down k nodes, without hot spares, waits for the
// slowest of k exponential repairs: on average repair x (1 + 1/2 + ... + 1/k).
TEST(RunTimelineTest, CorrelatedFailuresWaitForTheSlowestRepair) {
  TimelineInputs in = Base();
  in.hot_spares = false;
  in.repair_s = 3600;
  in.causes = {{"switch", "switch-cable", 0.5, true, false, 4}};
  const TimelineStats st = SimulateRuns(in, {.trials = 100, .seed = 2});
  const double per_failure = st.mean_repair_s / st.mean_interruptions[0];
  EXPECT_NEAR(per_failure, 3600 * (1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4), 0.03 * 7500);
}

TEST(RunTimelineTest, AsyncUploadDelaysDurability) {
  TimelineInputs in = Base();
  in.stall_s = 1;
  const TimelineStats fast = SimulateRuns(in, {.trials = 100, .seed = 5});
  in.upload_s = 900;
  const TimelineStats slow = SimulateRuns(in, {.trials = 100, .seed = 5});
  EXPECT_GT(slow.mean_lost_s, fast.mean_lost_s * 1.2);
}

TEST(RunTimelineTest, LongRunsCrossTheClockInStretches) {
  TimelineInputs in = Base();
  in.causes = {{"rare", "gpu", 1e-5, true, false}};
  in.compute_s = 300 * 86400.0;  // past the 106-day picosecond clock
  in.interval_s = 86400;
  in.stall_s = 10;
  const TimelineStats st = SimulateRuns(in, {.trials = 2, .seed = 1});
  EXPECT_GE(st.wall_s[0], in.compute_s);
  EXPECT_LT(st.wall_s[1], in.compute_s * 1.01);
}

TEST(RunTimelineTest, YoungDalyFormula) {
  // d << M: close to Young's sqrt(2 d M).
  EXPECT_NEAR(YoungDalyInterval(10, 36000), std::sqrt(2 * 10 * 36000.0), 0.02 * 848.5);
  EXPECT_EQ(YoungDalyInterval(100, 40), 40);  // d >= 2M: checkpoint every MTTF
}

}  // namespace
}  // namespace clustersim::scenarios
