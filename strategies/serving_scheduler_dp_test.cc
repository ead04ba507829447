// The scheduler under data-parallel attention: prompt placement on one rank,
// TensorRT-LLM's mixed iterations of decode steps and whole prompts, its
// attention-DP balancer, and CUDA-graph padding of decode-only iterations.
#include <vector>

#include "gtest/gtest.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::strategies {
namespace {

ServingRequest At(int64_t ms, int64_t prompt, int64_t output) {
  return {sim::Time::Zero() + sim::Milliseconds(ms), prompt, output};
}

// Runs the requests and returns every iteration's totals (1 ms each).
std::vector<IterationTotals> Totals(const std::vector<ServingRequest>& r,
                                    const SchedulerConfig& c) {
  std::vector<IterationTotals> seen;
  const IterationCostFn cost = [&seen](const IterationTotals& t) {
    seen.push_back(t);
    IterationCost ic;
    ic.time = sim::Milliseconds(1);
    return ic;
  };
  absl::StatusOr<ServingRun> run = SimulateServing(r, c, cost, /*keep_iterations=*/false);
  EXPECT_TRUE(run.ok()) << run.status();
  return seen;
}

// The first iteration from `from` on that starts a prompt; -1: none.
int FirstPromptFrom(const std::vector<IterationTotals>& t, size_t from) {
  for (size_t i = from; i < t.size(); ++i) {
    if (t[i].prefill_tokens > 0) return static_cast<int>(i);
  }
  return -1;
}

SchedulerConfig DpConfig(int ranks, int64_t tokens_per_rank) {
  SchedulerConfig c;
  c.kv_blocks = 10000;
  c.watermark = 0;
  c.attention_dp_ranks = ranks;
  c.max_tokens_per_step = tokens_per_rank * ranks;
  return c;
}

// The first arrival starts an iteration alone; three more prompts of 100
// tokens over 4 ranks then each run whole on their own rank, so the busiest
// rank holds one prompt (100 tokens), not 300 / 4.
TEST(ServingSchedulerDpTest, EachPromptRunsWholeOnTheLeastLoadedRank) {
  const std::vector<IterationTotals> t =
      Totals({At(0, 100, 2), At(0, 100, 2), At(0, 100, 2), At(0, 100, 2)}, DpConfig(4, 1000));
  ASSERT_GE(t.size(), 3u);
  EXPECT_EQ(t[1].prefill_tokens, 300);
  EXPECT_EQ(t[1].rank_tokens, 100);
  EXPECT_EQ(t[1].rank_prefill_tokens, 100);
  EXPECT_EQ(t[1].rank_prefill_kv_tokens, 100);
  EXPECT_DOUBLE_EQ(t[1].rank_prefill_pairs, 100 * (100 + 1) / 2.0);
  // A decode step is spread evenly: no placement.
  EXPECT_EQ(t[2].prefill_tokens, 0);
  EXPECT_EQ(t[2].rank_tokens, 0);
}

// Prompts of 600 tokens with 1000 tokens per rank on 2 ranks: one per rank;
// a third fits on neither and waits for the next iteration.
TEST(ServingSchedulerDpTest, APromptWaitsWhenNoRankHasRoom) {
  const std::vector<IterationTotals> t =
      Totals({At(0, 10, 5), At(0, 600, 2), At(0, 600, 2), At(0, 600, 2)}, DpConfig(2, 1000));
  ASSERT_GE(t.size(), 3u);
  EXPECT_EQ(t[1].prefill_tokens, 1200);
  EXPECT_EQ(t[1].rank_tokens, 600);
  EXPECT_EQ(t[2].prefill_tokens, 600);
}

// Mixed iterations: decode steps first, then whole prompts in the same
// iteration within each rank's remaining budget.
TEST(ServingSchedulerDpTest, MixedIterationsJoinPromptsToDecodeSteps) {
  SchedulerConfig c = DpConfig(2, 1000);
  c.mixed_whole_prompts = true;
  const std::vector<IterationTotals> t = Totals({At(0, 100, 5), At(0, 100, 5), At(2, 900, 2)}, c);
  ASSERT_GE(t.size(), 3u);
  // Iteration 3 (t = 2 ms) decodes the first two and starts the 900-token
  // prompt on a rank holding one decode step: 901 tokens.
  EXPECT_EQ(t[2].decode_seqs, 2);
  EXPECT_EQ(t[2].prefill_tokens, 900);
  EXPECT_EQ(t[2].rank_tokens, 901);
}

// The attention-DP balancer holds prompts until every rank has one, then
// batching_wait_iters more iterations while every rank decodes.
TEST(ServingSchedulerDpTest, BalancerHoldsPromptsUntilEveryRankHasOne) {
  SchedulerConfig c = DpConfig(2, 1000);
  c.mixed_whole_prompts = true;
  c.adp_balance = true;
  c.adp_batching_wait_iters = 2;
  c.adp_timeout_iters = 3;
  // Two requests at 0 (the second starts at once: a rank has nothing to
  // decode), then one prompt at 2 ms: only one rank would have a prompt, so
  // it waits for the timeout, which counts every iteration without a prompt
  // on every rank (2, 3, 4; as TensorRT-LLM's).
  std::vector<IterationTotals> t = Totals({At(0, 10, 20), At(0, 10, 20), At(2, 50, 2)}, c);
  int first = FirstPromptFrom(t, 2);
  EXPECT_EQ(first, 4);
  // Two prompts (one per rank): held for the 2 batching iterations.
  t = Totals({At(0, 10, 20), At(0, 10, 20), At(2, 50, 2), At(2, 50, 2)}, c);
  first = FirstPromptFrom(t, 2);
  EXPECT_EQ(first, 2 + 2);
  EXPECT_EQ(t[first].prefill_tokens, 100);
  EXPECT_EQ(t[first].rank_tokens, 51);
}

// Decode-only iterations run the smallest captured CUDA graph holding the
// busiest rank's sequences: 3 sequences over 2 ranks (2 on the busiest) pad
// to 4 rows per rank, 8 in all; prompts are never padded.
TEST(ServingSchedulerDpTest, DecodeStepsPadToTheCapturedCudaGraph) {
  SchedulerConfig c = DpConfig(2, 1000);
  c.cuda_graph_batch_sizes = {1, 4, 8};
  const std::vector<IterationTotals> t = Totals({At(0, 10, 3), At(0, 10, 3), At(0, 10, 3)}, c);
  EXPECT_EQ(t[1].tokens, 20);
  EXPECT_EQ(t[2].decode_seqs, 3);
  EXPECT_EQ(t[2].tokens, 8);
  // Above the largest captured batch: no graph, no padding.
  c.cuda_graph_batch_sizes = {1};
  EXPECT_EQ(Totals({At(0, 10, 3), At(0, 10, 3), At(0, 10, 3)}, c)[2].tokens, 3);
}

// TensorRT-LLM's attention-DP ranks all run eagerly when any one has a
// prompt: with prompts mixed into decode steps, an iteration where a late
// prompt joins one rank is eager for the whole replica, and the decode-only
// iterations replay their graphs (at most 2 sequences per rank here).
TEST(ServingSchedulerDpTest, AnIterationWithAPromptOnAnyRankRunsEager) {
  SchedulerConfig c = DpConfig(2, 1000);
  c.mixed_whole_prompts = true;
  c.cuda_graph_batch_sizes = {1, 4, 8};
  const std::vector<ServingRequest> r = {At(0, 10, 6), At(0, 10, 6), At(2, 10, 3)};
  const std::vector<IterationTotals> t = Totals(r, c);
  int mixed = 0, decode_only = 0;
  for (const IterationTotals& u : t) {
    EXPECT_EQ(u.eager, u.prefill_tokens > 0);
    if (u.prefill_tokens > 0 && u.decode_seqs > 0) {
      ++mixed;
      EXPECT_LT(u.rank_prefill_tokens, u.prefill_tokens + 1);
    }
    decode_only += u.prefill_tokens == 0;
  }
  EXPECT_GE(mixed, 1);
  EXPECT_GE(decode_only, 3);
  // No graphs captured: nothing is marked.
  c.cuda_graph_batch_sizes.clear();
  for (const IterationTotals& u : Totals(r, c)) EXPECT_FALSE(u.eager);
}

}  // namespace
}  // namespace clustersim::strategies
