#include "strategies/serving_scheduler.h"

#include <atomic>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

// A cost made up for the tests: 1 ms per iteration plus 10 us per new token.
IterationCost FakeCost(const IterationTotals& t) {
  IterationCost c;
  c.time = sim::Milliseconds(1) + sim::Microseconds(10) * t.tokens;
  c.compute = c.time;
  return c;
}

ServingRequest At(int64_t ms, int64_t prompt, int64_t output) {
  return {sim::Time::Zero() + sim::Milliseconds(ms), prompt, output};
}

ServingRun Simulate(const std::vector<ServingRequest>& r, const SchedulerConfig& c) {
  absl::StatusOr<ServingRun> run = SimulateServing(r, c, FakeCost, /*keep_iterations=*/true);
  EXPECT_TRUE(run.ok()) << run.status();
  return *std::move(run);
}

SchedulerConfig Config(int64_t blocks) {
  SchedulerConfig c;
  c.kv_blocks = blocks;
  c.watermark = 0;
  return c;
}

double Ms(sim::Time t) { return t.ToSeconds() * 1e3; }

TEST(ServingSchedulerTest, OneRequestPrefillsThenDecodes) {
  const ServingRun run = Simulate({At(0, 100, 10)}, Config(100));
  ASSERT_EQ(run.requests.size(), 1u);
  // Prefill: 1 + 100 x 0.01 = 2 ms; then 9 decodes of 1.01 ms.
  EXPECT_DOUBLE_EQ(Ms(run.requests[0].first_token), 2.0);
  EXPECT_NEAR(Ms(run.requests[0].finish), 2.0 + 9 * 1.01, 1e-9);
  EXPECT_EQ(run.num_iterations, 10);
}

// A set stop flag ends the simulation with CANCELLED (checked every
// Simulator::kCancelCheckEvents events, so a long trace stops early); a clear
// one changes nothing.
TEST(ServingSchedulerTest, StopFlagCancelsTheSimulation) {
  std::vector<ServingRequest> many;
  for (int i = 0; i < 5000; ++i) many.push_back(At(i, 100, 10));
  std::atomic<bool> stop{true};
  SchedulerConfig c = Config(1000);
  c.cancel = &stop;
  absl::StatusOr<ServingRun> run = SimulateServing(many, c, FakeCost, false);
  EXPECT_EQ(run.status().code(), absl::StatusCode::kCancelled);
  stop = false;
  run = SimulateServing(many, c, FakeCost, false);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->requests.size(), many.size());
}

// Continuous batching: a request arriving mid-decode is prefilled between
// two decode steps of the first and then decodes alongside it.
TEST(ServingSchedulerTest, NewRequestsJoinBetweenDecodeSteps) {
  const ServingRun run = Simulate({At(0, 100, 20), At(5, 100, 5)}, Config(100));
  const RequestRecord& a = run.requests[0];
  const RequestRecord& b = run.requests[1];
  EXPECT_LT(b.first_token, a.finish);
  bool batched = false;
  for (const IterationRecord& it : run.iterations) batched |= it.decode_seqs == 2;
  EXPECT_TRUE(batched);
  EXPECT_EQ(run.peak_running, 2);
  // A's decode alone would take 19 x 1.01 ms; B's prefill and shared steps
  // stretch it.
  EXPECT_GT(Ms(a.finish) - Ms(a.first_token), 19 * 1.01);
}

// KV capacity limits admission: 4 blocks of 16 tokens hold one 48-token
// prompt and its 16 outputs; the second prompt's 3 blocks are not free, so
// it waits in the queue until the first finishes.
TEST(ServingSchedulerTest, FullKvCacheQueuesRequests) {
  const ServingRun run = Simulate({At(0, 48, 16), At(0, 48, 16)}, Config(4));
  EXPECT_GE(run.requests[1].first_token, run.requests[0].finish);
  EXPECT_EQ(run.preemptions, 0);
}

// Room for both prompts but not both whole sequences: the newest is
// preempted (recompute) and still finishes with all its tokens.
TEST(ServingSchedulerTest, RunningOutOfBlocksPreemptsTheNewest) {
  const ServingRun run = Simulate({At(0, 16, 40), At(0, 16, 40)}, Config(5));
  EXPECT_GT(run.preemptions, 0);
  EXPECT_GT(run.requests[1].preemptions, 0);
  EXPECT_EQ(run.requests[0].preemptions, 0);
  for (const RequestRecord& r : run.requests) EXPECT_GT(r.finish, r.first_token);
}

// Reserving whole requests (GUARANTEED_NO_EVICT): the same two requests of
// 56 tokens (4 blocks of 16 each) in 5 blocks run one after the other, and
// nothing is preempted.
TEST(ServingSchedulerTest, ReservingWholeRequestsNeverPreempts) {
  SchedulerConfig c = Config(5);
  c.reserve_whole_request = true;
  const ServingRun run = Simulate({At(0, 16, 40), At(0, 16, 40)}, c);
  EXPECT_EQ(run.preemptions, 0);
  EXPECT_EQ(run.peak_running, 1);
  EXPECT_GE(run.requests[1].first_token, run.requests[0].finish);
  // Room for both whole requests: they run together.
  c.kv_blocks = 8;
  const ServingRun both = Simulate({At(0, 16, 40), At(0, 16, 40)}, c);
  EXPECT_EQ(both.peak_running, 2);
  EXPECT_EQ(both.preemptions, 0);
  // A request whose whole length exceeds the cache cannot run.
  c.kv_blocks = 3;
  EXPECT_FALSE(SimulateServing({At(0, 16, 40)}, c, FakeCost, false).ok());
}

TEST(ServingSchedulerTest, MaxBatchSizeCapsRunningSequences) {
  std::vector<ServingRequest> r(10, At(0, 10, 10));
  SchedulerConfig c = Config(1000);
  c.max_batch_size = 3;
  const ServingRun run = Simulate(r, c);
  EXPECT_EQ(run.peak_running, 3);
}

// Chunked prefill: a 1000-token prompt under a 256-token budget takes four
// iterations, each also carrying the running request's decode step.
TEST(ServingSchedulerTest, ChunkedPrefillMixesDecodesAndPromptChunks) {
  SchedulerConfig c = Config(1000);
  c.chunked_prefill = true;
  c.max_tokens_per_step = 256;
  const ServingRun run = Simulate({At(0, 10, 50), At(3, 1000, 2)}, c);
  int mixed = 0;
  for (const IterationRecord& it : run.iterations) {
    if (it.prefill_tokens > 0 && it.decode_seqs > 0) ++mixed;
    EXPECT_LE(it.prefill_tokens + it.decode_seqs, 256);
  }
  EXPECT_GE(mixed, 4);
  // Without chunking the long prompt needs a bigger budget.
  c.chunked_prefill = false;
  absl::StatusOr<ServingRun> bad = SimulateServing({At(0, 1000, 2)}, c, FakeCost, false);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("inference.max_tokens_per_step=256"));
}

TEST(ServingSchedulerTest, ARequestLongerThanTheCacheIsAnError) {
  absl::StatusOr<ServingRun> run =
      SimulateServing({At(0, 1000, 1000)}, Config(10), FakeCost, false);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("need 125 KV blocks"));
  EXPECT_THAT(run.status().message(), HasSubstr("holds 10"));
}

TEST(ServingSchedulerTest, QueueingDelayGrowsUnderOverload) {
  // 200 requests 1 ms apart; each needs ~12 ms of service at batch 1 but the
  // batch grows: still, arrivals faster than service make TTFT grow.
  std::vector<ServingRequest> r;
  for (int i = 0; i < 200; ++i) r.push_back(At(i / 4, 512, 64));
  SchedulerConfig c = Config(100000);
  c.max_batch_size = 8;
  const ServingRun run = Simulate(r, c);
  const double first = Ms(run.requests[0].first_token) - Ms(run.requests[0].arrival);
  const double last = Ms(run.requests[199].first_token) - Ms(run.requests[199].arrival);
  EXPECT_GT(last, 10 * first);
}

// The frontend's time per request is spent before the engine sees the
// request: TTFT and finish move by it, TPOT does not, and the record keeps
// the client's send time.
TEST(ServingSchedulerTest, FrontendDelayLengthensTtftNotTpot) {
  SchedulerConfig c = Config(100);
  c.frontend_delay = sim::Milliseconds(11);
  const ServingRun run = Simulate({At(0, 100, 10)}, c);
  EXPECT_DOUBLE_EQ(Ms(run.requests[0].arrival), 0.0);
  // The prefill of OneRequestPrefillsThenDecodes (2 ms), 11 ms later.
  EXPECT_DOUBLE_EQ(Ms(run.requests[0].first_token), 13.0);
  EXPECT_NEAR(Ms(run.requests[0].finish) - Ms(run.requests[0].first_token), 9 * 1.01, 1e-9);
}

// A closed-loop client sends its next request when the last one finishes; it
// reaches the engine one frontend delay later.
TEST(ServingSchedulerTest, FrontendDelayPrecedesEachClosedLoopRequest) {
  SchedulerConfig c = Config(100);
  c.closed_loop_clients = 1;
  c.frontend_delay = sim::Milliseconds(5);
  const ServingRun run = Simulate({At(0, 100, 1), At(0, 100, 1)}, c);
  // Each request: 5 ms outside the engine, then a 2 ms prefill that emits its
  // only token.
  EXPECT_DOUBLE_EQ(Ms(run.requests[0].finish), 7.0);
  EXPECT_DOUBLE_EQ(Ms(run.requests[1].arrival), 7.0);
  EXPECT_DOUBLE_EQ(Ms(run.requests[1].first_token), 14.0);
}

TEST(ServingSchedulerTest, NegativeFrontendDelayIsAnError) {
  SchedulerConfig c = Config(100);
  c.frontend_delay = sim::Milliseconds(-1);
  absl::StatusOr<ServingRun> run = SimulateServing({At(0, 10, 1)}, c, FakeCost, false);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("inference.frontend.request_overhead_ms"));
}

// Sliding-window layers (half the KV bytes here, a 128-token window) give
// back the blocks their window leaves once the prompt is in. Eight 1,024-token
// prompts in a 288-block cache: with every layer full, 4 run at once (64
// blocks each, 68 at their last step); with half the layers windowed a
// decoding sequence holds 65 + 9 units of 2 per block and 7 run at once,
// each prompt holding all 128 units while it is computed.
TEST(ServingSchedulerTest, WindowedLayersFreeTheBlocksTheWindowLeaves) {
  std::vector<ServingRequest> eight;
  for (int i = 0; i < 8; ++i) eight.push_back(At(0, 1024, 64));
  SchedulerConfig full = Config(288);
  full.max_tokens_per_step = 8192;
  const ServingRun a = Simulate(eight, full);
  SchedulerConfig windowed = full;
  windowed.sliding_window = 128;
  windowed.kv_window_weight = 1;
  const ServingRun b = Simulate(eight, windowed);
  EXPECT_EQ(a.peak_running, 4);
  EXPECT_EQ(b.peak_running, 7);
  EXPECT_EQ(b.preemptions, 0);
  // The last sequence's last step (1,087 tokens) holds 68 + 9 of the
  // cache's 2 x 288 units; the records count whole blocks, rounded up.
  EXPECT_EQ(b.iterations.back().kv_blocks_used, 39);
  for (const auto& it : b.iterations) EXPECT_LE(it.kv_blocks_used, 288);
}

}  // namespace
}  // namespace clustersim::strategies
