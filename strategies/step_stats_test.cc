#include "strategies/step_stats.h"

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

struct Fixture {
  StepPlan plan;
  sim::ResourceId compute, tp, dp;
  Fixture() {
    plan.world_size = 1;
    plan.simulated_gpus = {0};
    compute = plan.graph.AddResource("gpu0/compute", 0, kComputeLane);
    tp = plan.graph.AddResource("gpu0/comm:tp", 0, kTensorCommLane);
    dp = plan.graph.AddResource("gpu0/comm:dp", 0, kDataCommLane);
  }
  void Span(StepStats& stats, sim::ResourceId r, int64_t start_ns, int64_t end_ns) {
    const sim::TaskId t = plan.graph.AddTask(r, sim::Nanoseconds(end_ns - start_ns), 0);
    stats.OnSpan(plan.graph, sim::Span{r, t, 0, sim::Time::Zero() + sim::Nanoseconds(start_ns),
                                       sim::Time::Zero() + sim::Nanoseconds(end_ns)});
  }
};

TEST(StepStatsTest, ExposedCommIsCommNotHiddenByCompute) {
  Fixture f;
  StepStats stats(f.plan);
  f.Span(stats, f.compute, 0, 10);
  f.Span(stats, f.tp, 10, 15);   // fully exposed
  f.Span(stats, f.compute, 15, 20);
  f.Span(stats, f.dp, 18, 30);   // 2 ns hidden, 10 exposed
  const StepStats::Summary s = stats.Summarize(sim::Time::Zero() + sim::Nanoseconds(30));
  EXPECT_EQ(s.compute, sim::Nanoseconds(15));
  EXPECT_EQ(s.exposed_tp, sim::Nanoseconds(5));
  EXPECT_EQ(s.exposed_dp, sim::Nanoseconds(10));
  EXPECT_EQ(s.exposed_comm, sim::Nanoseconds(15));
  EXPECT_EQ(s.bubble, sim::Duration::Zero());  // the gap is covered by the TP collective
  EXPECT_EQ(s.step_time, sim::Nanoseconds(30));
}

TEST(StepStatsTest, IdleComputeWithoutCommIsBubble) {
  Fixture f;
  StepStats stats(f.plan);
  f.Span(stats, f.compute, 0, 10);
  f.Span(stats, f.compute, 25, 30);
  f.Span(stats, f.tp, 12, 15);
  const StepStats::Summary s = stats.Summarize(sim::Time::Zero() + sim::Nanoseconds(30));
  EXPECT_EQ(s.bubble, sim::Nanoseconds(12));  // [10,25) minus [12,15)
}

TEST(StepStatsTest, WaitsBeforeFirstAndAfterLastWorkAreBubble) {
  // A pipeline stage idles in warm-up and cool-down: that is its bubble.
  Fixture f;
  StepStats stats(f.plan);
  f.Span(stats, f.compute, 4, 10);
  f.Span(stats, f.compute, 10, 16);
  const StepStats::Summary s = stats.Summarize(sim::Time::Zero() + sim::Nanoseconds(20));
  EXPECT_EQ(s.bubble, sim::Nanoseconds(8));
}

TEST(StepStatsTest, OverlappingCommLanesCountOnce) {
  Fixture f;
  StepStats stats(f.plan);
  f.Span(stats, f.tp, 0, 10);
  f.Span(stats, f.dp, 5, 12);
  const StepStats::Summary s = stats.Summarize(sim::Time::Zero() + sim::Nanoseconds(12));
  EXPECT_EQ(s.exposed_comm, sim::Nanoseconds(12));
  EXPECT_EQ(s.exposed_tp + s.exposed_dp, sim::Nanoseconds(17));
}

TEST(StepStatsTest, ManySeparateSpansOfEveryMagnitudeAreKeptExactly) {
  // Spans with gaps from 1 ns to a second and lengths from 0 to a second, each its
  // own interval: the totals are the plain sums.
  Fixture f;
  StepStats stats(f.plan);
  int64_t t = 0, compute = 0, exposed = 0;
  for (int i = 0; i < 2000; ++i) {
    const int64_t gap = int64_t{1} << (i % 31);
    const int64_t len = i % 7 == 0 ? 0 : (int64_t{1} << (i % 30)) + i;
    t += gap;
    if (i % 3 == 0) {
      f.Span(stats, f.tp, t, t + len);
      exposed += len;
    } else {
      f.Span(stats, f.compute, t, t + len);
      compute += len;
    }
    t += len;
  }
  const StepStats::Summary s = stats.Summarize(sim::Time::Zero() + sim::Nanoseconds(t));
  EXPECT_EQ(s.compute, sim::Nanoseconds(compute));
  EXPECT_EQ(s.exposed_tp, sim::Nanoseconds(exposed));
  EXPECT_EQ(s.bubble, sim::Nanoseconds(t - compute - exposed));
  const std::vector<StepStats::GpuBusy> busy = stats.PerGpu();
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0].compute, sim::Nanoseconds(compute));
  EXPECT_EQ(busy[0].exposed_comm, sim::Nanoseconds(exposed));
}

TEST(StepStatsTest, ManyGpusEachGetTheirOwnFiguresAndTheCriticalOneIsTheBusiest) {
  // Enough GPUs for the figures to be worked out on two threads: GPU g
  // computes for g + 1 ns and waits g % 5 ns on exposed communication; the
  // two busiest tie, and the lower index is the critical one.
  constexpr int kGpus = 1500;
  StepPlan plan;
  plan.world_size = kGpus;
  std::vector<sim::ResourceId> compute(kGpus), tp(kGpus);
  for (int g = 0; g < kGpus; ++g) {
    plan.simulated_gpus.push_back(g);
    compute[g] = plan.graph.AddResource("compute", g, kComputeLane);
    tp[g] = plan.graph.AddResource("tp", g, kTensorCommLane);
  }
  StepStats stats(plan);
  const auto span = [&](sim::ResourceId r, int64_t start_ns, int64_t end_ns) {
    const sim::TaskId t = plan.graph.AddTask(r, sim::Nanoseconds(end_ns - start_ns), 0);
    stats.OnSpan(plan.graph, sim::Span{r, t, 0, sim::Time::Zero() + sim::Nanoseconds(start_ns),
                                       sim::Time::Zero() + sim::Nanoseconds(end_ns)});
  };
  for (int g = 0; g < kGpus; ++g) {
    const int64_t busy = g == kGpus - 1 ? kGpus - 1 : g + 1;  // the last ties the one before
    span(compute[g], 0, busy);
    span(tp[g], busy, busy + g % 5);
  }
  const std::vector<StepStats::GpuBusy> per_gpu = stats.PerGpu();
  ASSERT_EQ(per_gpu.size(), static_cast<size_t>(kGpus));
  for (int g = 0; g < kGpus - 1; ++g) {
    ASSERT_EQ(per_gpu[g].gpu, g);
    ASSERT_EQ(per_gpu[g].compute, sim::Nanoseconds(g + 1)) << g;
    ASSERT_EQ(per_gpu[g].exposed_comm, sim::Nanoseconds(g % 5)) << g;
  }
  const StepStats::Summary s = stats.Summarize(sim::Time::Zero() + sim::Nanoseconds(2 * kGpus));
  EXPECT_EQ(s.critical_gpu, kGpus - 2);
  EXPECT_EQ(s.compute, sim::Nanoseconds(kGpus - 1));
  EXPECT_EQ(s.exposed_tp, sim::Nanoseconds((kGpus - 2) % 5));
}

}  // namespace
}  // namespace clustersim::strategies
