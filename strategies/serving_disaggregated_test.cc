#include "strategies/serving_disaggregated.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

IterationCostFn Constant(sim::Duration t) {
  return [t](const IterationTotals&) {
    IterationCost c;
    c.time = c.compute = t;
    return c;
  };
}

SchedulerConfig Limits(int64_t blocks) {
  return {.max_batch_size = 64,
          .max_tokens_per_step = 4096,
          .kv_blocks = blocks,
          .kv_block_size = 16,
          .watermark = 0};
}

// Prefill 10 ms per iteration, decode 1 ms per step, transfer 5 ms.
DisaggConfig Simple() {
  return {
      .prefill = {.instances = 1,
                  .scheduler = Limits(1000),
                  .cost = Constant(sim::Milliseconds(10))},
      .decode = {.instances = 1, .scheduler = Limits(1000), .cost = Constant(sim::Milliseconds(1))},
      .transfer = [](int, int, int64_t) { return sim::Milliseconds(5); }};
}

ServingRequest At(double ms, int64_t prompt, int64_t output) {
  return {.arrival = sim::Time::Zero() + sim::Duration::FromSecondsDouble(ms * 1e-3),
          .prompt_tokens = prompt,
          .output_tokens = output};
}

double Ms(sim::Time t) { return t.ToSeconds() * 1e3; }

TEST(DisaggregatedTest, OneRequestPrefillsTransfersAndDecodes) {
  // First token at the prefill's end (10 ms); the KV moves 10 -> 15 ms; the
  // other 10 tokens take one 1 ms decode step each: finish at 25 ms.
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 100, 11)}, Simple());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(Ms(run->requests[0].first_token), 10);
  EXPECT_DOUBLE_EQ(Ms(run->paths[0].transfer_start), 10);
  EXPECT_DOUBLE_EQ(Ms(run->paths[0].transfer_end), 15);
  EXPECT_DOUBLE_EQ(Ms(run->requests[0].finish), 25);
  EXPECT_EQ(run->prefill.iterations, 1);
  EXPECT_EQ(run->decode.iterations, 10);
  EXPECT_EQ(run->transfers, 1);
  EXPECT_EQ(run->transferred_tokens, 100);
}

TEST(DisaggregatedTest, OneTokenRequestFinishesAtItsPrefill) {
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 100, 1)}, Simple());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(Ms(run->requests[0].finish), 10);
  EXPECT_EQ(run->transfers, 0);
  EXPECT_EQ(run->decode.iterations, 0);
}

TEST(DisaggregatedTest, LayerwiseTransferExposesTheLastLayerOrTheBacklog) {
  // T 8 ms over 4 layers of a 10 ms prefill: the link keeps up, 2 ms exposed.
  EXPECT_EQ(LayerwiseExposed(sim::Milliseconds(8), sim::Milliseconds(10), 4), sim::Milliseconds(2));
  // T 40 ms: the link is the bottleneck; 40 - 3/4 x 10 = 32.5 ms exposed.
  EXPECT_EQ(LayerwiseExposed(sim::Milliseconds(40), sim::Milliseconds(10), 4),
            sim::Microseconds(32500));
  DisaggConfig c = Simple();
  c.transfer = [](int, int, int64_t) { return sim::Milliseconds(8); };
  c.layerwise = true;
  c.num_layers = 4;
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 100, 11)}, c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(Ms(run->paths[0].transfer_end), 12);
  EXPECT_DOUBLE_EQ(Ms(run->requests[0].finish), 22);
}

TEST(DisaggregatedTest, DecodeMemoryMakesTheNextRequestWait) {
  // The first arrival starts a prefill alone (0 -> 10 ms), the second follows
  // (10 -> 20 ms). 10 decode blocks of 16 tokens: a 100-token prompt pulls
  // ceil(101/16) = 7, so the second request waits until the first finishes
  // (15 + 19 = 34 ms), then transfers 34 -> 39 ms and decodes 19 steps: 58 ms.
  DisaggConfig c = Simple();
  c.decode.scheduler = Limits(10);
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 100, 20), At(0, 100, 20)}, c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->prefill.iterations, 2);
  EXPECT_DOUBLE_EQ(Ms(run->requests[1].first_token), 20);
  EXPECT_DOUBLE_EQ(Ms(run->requests[0].finish), 34);
  EXPECT_DOUBLE_EQ(Ms(run->paths[1].transfer_start), 34);
  EXPECT_DOUBLE_EQ(Ms(run->requests[1].finish), 58);
}

TEST(DisaggregatedTest, TransfersFromOnePrefillInstanceShareItsLink) {
  // Transfers of 15 ms: the first runs 10 -> 25 ms, so the second, whose
  // prefill ends at 20 ms, waits for the link and runs 25 -> 40 ms.
  DisaggConfig c = Simple();
  c.transfer = [](int, int, int64_t) { return sim::Milliseconds(15); };
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 100, 2), At(0, 100, 2)}, c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(Ms(run->paths[1].transfer_start), 25);
  EXPECT_DOUBLE_EQ(Ms(run->paths[1].transfer_end), 40);
}

TEST(DisaggregatedTest, RoutesRoundRobinOrToTheLeastLoaded) {
  DisaggConfig c = Simple();
  c.prefill.instances = 2;
  c.decode.instances = 2;
  c.routing = DisaggRouting::kRoundRobin;
  const std::vector<ServingRequest> r = {At(0, 100, 5), At(0, 50, 5), At(0, 10, 5)};
  absl::StatusOr<DisaggRun> rr = SimulateDisaggregated(r, c);
  ASSERT_TRUE(rr.ok()) << rr.status();
  EXPECT_EQ(rr->paths[0].prefill_instance, 0);
  EXPECT_EQ(rr->paths[1].prefill_instance, 1);
  EXPECT_EQ(rr->paths[2].prefill_instance, 0);
  // Least loaded: 100 queued tokens on instance 0 and 50 on 1 send the third
  // prompt to 1.
  c.routing = DisaggRouting::kLeastLoaded;
  absl::StatusOr<DisaggRun> ll = SimulateDisaggregated(r, c);
  ASSERT_TRUE(ll.ok()) << ll.status();
  EXPECT_EQ(ll->paths[0].prefill_instance, 0);
  EXPECT_EQ(ll->paths[1].prefill_instance, 1);
  EXPECT_EQ(ll->paths[2].prefill_instance, 1);
  // Decode: requests 0 and 1 end their prefills together at 10 ms; 0 takes
  // decode instance 0 (a tie), 1 the instance without a sequence.
  EXPECT_EQ(ll->paths[0].decode_instance, 0);
  EXPECT_EQ(ll->paths[1].decode_instance, 1);
}

TEST(DisaggregatedTest, SwapsOutWhenDecodeBlocksRunOutAndStillFinishes) {
  // 16 decode blocks; 120-token prompts pull 8 each. Request 0 decodes from
  // 15 ms; request 1's transfer (20 -> 25 ms) holds the other 8. At 23 ms
  // request 0 reaches 129 tokens and needs a ninth block: none is free, so the
  // newest running sequence, itself, is swapped out. Request 1 then decodes
  // from 25 ms (99 steps: 124 ms) and request 0 comes back with 9 blocks for
  // its remaining 91 steps: 215 ms.
  DisaggConfig c = Simple();
  c.decode.scheduler = Limits(16);
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 120, 100), At(0, 120, 100)}, c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->decode.preemptions, 1);
  EXPECT_EQ(run->requests[0].preemptions, 1);
  EXPECT_DOUBLE_EQ(Ms(run->requests[1].finish), 124);
  EXPECT_DOUBLE_EQ(Ms(run->requests[0].finish), 215);
}

TEST(DisaggregatedTest, SameInputSameRun) {
  DisaggConfig c = Simple();
  c.prefill.instances = 3;
  c.decode.instances = 2;
  std::vector<ServingRequest> r;
  for (int i = 0; i < 200; ++i) r.push_back(At(i * 3.0, 50 + (i * 37) % 400, 1 + (i * 11) % 60));
  absl::StatusOr<DisaggRun> a = SimulateDisaggregated(r, c);
  absl::StatusOr<DisaggRun> b = SimulateDisaggregated(r, c);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(a->requests[i].finish, b->requests[i].finish);
    EXPECT_EQ(a->paths[i].decode_instance, b->paths[i].decode_instance);
  }
}

TEST(DisaggregatedTest, ErrorsNameTheField) {
  DisaggConfig c = Simple();
  c.prefill.instances = 0;
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 100, 5)}, c);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("inference.disaggregated.prefill.num_instances=0"));
  c = Simple();
  c.decode.scheduler = Limits(4);
  run = SimulateDisaggregated({At(0, 100, 5)}, c);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("inference.disaggregated.decode"));
  c = Simple();
  c.prefill.scheduler.max_tokens_per_step = 64;
  run = SimulateDisaggregated({At(0, 100, 5)}, c);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(),
              HasSubstr("inference.disaggregated.prefill.max_tokens_per_step=64"));
}

// The up-front check counts the watermark in whole blocks with sliding-window
// layers too: a request that fits a pool with a 1% watermark runs.
TEST(DisaggregatedTest, WindowedPoolsCheckRequestsInWholeBlocks) {
  DisaggConfig c = Simple();
  for (SchedulerConfig* s : {&c.prefill.scheduler, &c.decode.scheduler}) {
    s->watermark = 0.01;
    s->sliding_window = 128;
    s->kv_full_weight = 4096;
    s->kv_window_weight = 4096;
  }
  absl::StatusOr<DisaggRun> run = SimulateDisaggregated({At(0, 1000, 100)}, c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->requests[0].output_tokens, 100);
}

}  // namespace
}  // namespace clustersim::strategies
