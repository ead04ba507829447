#include "strategies/serving_dp_placement.h"

#include <vector>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

SequenceWork Prompt(int64_t tokens) {
  return {.new_tokens = tokens, .context = 0, .decode = false, .samples = true};
}

// Each prompt goes whole to the least-loaded rank, within its share of the
// budget (1000 per rank here).
TEST(DpPromptPlacementTest, PlacesOnTheLeastLoadedRankWithinItsShare) {
  DpPromptPlacement p(2, 2000);
  EXPECT_EQ(p.Place(600), 0);
  p.Assign(0, 0, 600);
  EXPECT_EQ(p.Place(600), 1);
  p.Assign(1, 1, 600);
  EXPECT_EQ(p.Place(600), -1);
  EXPECT_EQ(p.Place(400), 0);
  p.Reset();
  EXPECT_EQ(p.Place(1000), 0);
  EXPECT_EQ(p.Place(1001), -1);
}

// Decode steps are spread evenly (ceil), so a prompt lands on top of them.
TEST(DpPromptPlacementTest, DecodeStepsSpreadEvenly) {
  DpPromptPlacement p(4, 4000);
  p.SpreadDecodes(10);  // 3 per rank
  EXPECT_EQ(p.Place(997), 0);
  EXPECT_EQ(p.Place(998), -1);
}

// The busiest rank's tokens and its prompts alone.
TEST(DpPromptPlacementTest, BusiestRankCarriesItsOwnPrompts) {
  DpPromptPlacement p(2, 2000);
  const std::vector<SequenceWork> work = {Prompt(300), Prompt(100), Prompt(50)};
  p.Assign(0, 0, 300);
  p.Assign(1, 1, 100);
  p.Assign(2, 1, 50);
  IterationTotals t = Summarise(work);
  p.BusiestRank(work, &t);
  EXPECT_EQ(t.prefill_tokens, 450);
  EXPECT_EQ(t.rank_tokens, 300);
  EXPECT_EQ(t.rank_prefill_tokens, 300);
  EXPECT_EQ(t.rank_prefill_kv_tokens, 300);
  EXPECT_DOUBLE_EQ(t.rank_prefill_pairs, 300 * 301 / 2.0);
}

// Prompts for every rank while every rank decodes: held for the batching
// iterations; a rank short of a prompt: held until the timeout; a rank with
// nothing to decode: never held.
TEST(AdpBalancerTest, HoldsPromptsForBatchingAndTimeout) {
  AdpBalancer b(2, /*batching_wait_iters=*/2, /*timeout_iters=*/3);
  EXPECT_FALSE(b.AdmitsNow(2, 2));
  EXPECT_FALSE(b.AdmitsNow(2, 2));
  EXPECT_TRUE(b.AdmitsNow(2, 2));
  EXPECT_FALSE(b.AdmitsNow(1, 2));
  EXPECT_FALSE(b.AdmitsNow(1, 2));
  EXPECT_TRUE(b.AdmitsNow(1, 2));
  EXPECT_TRUE(b.AdmitsNow(1, 1));
  EXPECT_TRUE(b.AdmitsNow(2, 1));
}

TEST(PadToCudaGraphTest, PadsDecodeOnlyIterationsToTheCapturedBatch) {
  IterationTotals t;
  t.tokens = t.decode_seqs = t.decode_queries = 3;
  PadToCudaGraph({1, 4, 8}, 2, &t);
  EXPECT_EQ(t.tokens, 8);
  t.tokens = 3;
  PadToCudaGraph({1}, 2, &t);
  EXPECT_EQ(t.tokens, 3);
  t.prefill_tokens = 5;
  PadToCudaGraph({1, 4, 8}, 2, &t);
  EXPECT_EQ(t.tokens, 3);
}

// TensorRT-LLM's PyTorch runtime replays a graph only for decode steps alone
// within the largest captured batch; any prompt, or a larger batch, runs
// eagerly. Without captured graphs nothing is marked.
TEST(PadToCudaGraphTest, MarksIterationsThatCannotReplayAGraphEager) {
  IterationTotals decode;
  decode.tokens = decode.decode_seqs = decode.decode_queries = 3;
  IterationTotals t = decode;
  PadToCudaGraph({1, 4, 8}, 2, &t);
  EXPECT_FALSE(t.eager);
  t = decode;
  PadToCudaGraph({1}, 2, &t);  // 2 sequences on the busiest rank, above 1
  EXPECT_TRUE(t.eager);
  t = decode;
  t.prefill_tokens = 5;
  PadToCudaGraph({1, 4, 8}, 2, &t);
  EXPECT_TRUE(t.eager);
  t = decode;
  t.prefill_tokens = 5;
  PadToCudaGraph({}, 2, &t);
  EXPECT_FALSE(t.eager);
}

}  // namespace
}  // namespace clustersim::strategies
