#include "strategies/serving_closed_loop.h"

#include <vector>

#include "gtest/gtest.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::strategies {
namespace {

// A cost made up for the tests: 1 ms per iteration plus 10 us per new token.
IterationCost FakeCost(const IterationTotals& t) {
  IterationCost c;
  c.time = sim::Milliseconds(1) + sim::Microseconds(10) * t.tokens;
  c.compute = c.time;
  return c;
}

std::vector<ServingRequest> Burst(int n, int64_t prompt, int64_t output) {
  return std::vector<ServingRequest>(n, {sim::Time::Zero(), prompt, output});
}

SchedulerConfig Config(int clients, sim::Duration think = sim::Duration::Zero()) {
  SchedulerConfig c;
  c.kv_blocks = 1000;
  c.watermark = 0;
  c.closed_loop_clients = clients;
  c.think_time = think;
  return c;
}

ServingRun Simulate(const std::vector<ServingRequest>& r, const SchedulerConfig& c) {
  absl::StatusOr<ServingRun> run = SimulateServing(r, c, FakeCost, /*keep_iterations=*/true);
  EXPECT_TRUE(run.ok()) << run.status();
  return *std::move(run);
}

double Ms(sim::Time t) { return t.ToSeconds() * 1e3; }

TEST(ClosedLoopClientsTest, SendsTheListInOrderOnePerFinish) {
  ClosedLoopClients c(3, 5, sim::Milliseconds(2));
  EXPECT_EQ(c.initial(), 3);
  const sim::Time now = sim::Time::Zero() + sim::Milliseconds(10);
  std::optional<ClosedLoopClients::Send> a = c.OnFinish(now);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->request, 3);
  EXPECT_EQ(a->at, now + sim::Milliseconds(2));
  EXPECT_EQ(c.OnFinish(now)->request, 4);
  EXPECT_FALSE(c.OnFinish(now).has_value());
  EXPECT_EQ(ClosedLoopClients(8, 5, sim::Duration::Zero()).initial(), 5);
}

// One client: requests run one after another, so the makespan is the sum of
// the end-to-end latencies. Each request alone: a 100-token prefill of
// 1 + 100 x 0.01 = 2 ms, then 9 decode steps of 1.01 ms = 11.09 ms.
TEST(ClosedLoopClientsTest, OneClientRunsRequestsBackToBack) {
  const ServingRun run = Simulate(Burst(5, 100, 10), Config(1));
  double e2e_sum = 0;
  for (size_t i = 0; i < run.requests.size(); ++i) {
    const RequestRecord& r = run.requests[i];
    EXPECT_NEAR(Ms(r.finish) - Ms(r.arrival), 11.09, 1e-9) << i;
    if (i > 0) {
      EXPECT_EQ(r.arrival, run.requests[i - 1].finish) << i;
    }
    e2e_sum += Ms(r.finish) - Ms(r.arrival);
  }
  EXPECT_NEAR(Ms(run.end), e2e_sum, 1e-9);
  EXPECT_NEAR(Ms(run.end), 5 * 11.09, 1e-9);
  EXPECT_EQ(run.peak_running, 1);
}

// A think time delays each next request: 5 x 11.09 ms + 4 gaps of 3 ms.
TEST(ClosedLoopClientsTest, ThinkTimeSeparatesRequests) {
  const ServingRun run = Simulate(Burst(5, 100, 10), Config(1, sim::Milliseconds(3)));
  EXPECT_NEAR(Ms(run.end), 5 * 11.09 + 4 * 3, 1e-9);
  EXPECT_NEAR(Ms(run.requests[1].arrival), 11.09 + 3, 1e-9);
}

// Never more requests in the server than clients; as many clients as
// requests is the open-loop burst.
TEST(ClosedLoopClientsTest, ClientsBoundTheRequestsInFlight) {
  const std::vector<ServingRequest> burst = Burst(12, 100, 10);
  const ServingRun two = Simulate(burst, Config(2));
  for (const IterationRecord& it : two.iterations) EXPECT_LE(it.running + it.waiting, 2);
  EXPECT_EQ(two.peak_running, 2);
  const ServingRun all = Simulate(burst, Config(12));
  const ServingRun open = Simulate(burst, Config(0));
  EXPECT_EQ(all.end, open.end);
  EXPECT_EQ(all.num_iterations, open.num_iterations);
  // Two clients take longer than the burst but less than one at a time.
  EXPECT_GT(two.end, open.end);
  EXPECT_LT(Ms(two.end), 12 * 11.09);
}

}  // namespace
}  // namespace clustersim::strategies
