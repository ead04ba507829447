#include "strategies/serving_speculative.h"

#include <cmath>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "strategies/serving_cost_testing.h"
#include "strategies/serving_scheduler.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

// Leviathan et al. 2023, eq. 1: E = (1 - alpha^(k+1)) / (1 - alpha).
TEST(SpeculativeTest, ExpectedTokensFollowTheTruncatedGeometricLaw) {
  EXPECT_DOUBLE_EQ(ExpectedAcceptedTokens(0, 4), 1.0);
  EXPECT_DOUBLE_EQ(ExpectedAcceptedTokens(1, 4), 5.0);
  EXPECT_NEAR(ExpectedAcceptedTokens(0.8, 4), (1 - 0.32768) / 0.2, 1e-12);  // 3.3616
  EXPECT_NEAR(ExpectedAcceptedTokens(0.5, 1), 1.5, 1e-12);
  // The inverse recovers alpha.
  for (double a : {0.1, 0.5, 0.8, 0.95}) {
    EXPECT_NEAR(AcceptanceRateForMeanTokens(ExpectedAcceptedTokens(a, 5), 5), a, 1e-9);
  }
}

// Draws are deterministic in (seed, request, step), lie in [1, drafted + 1],
// and their mean and P(1 token) = 1 - alpha match the law.
TEST(SpeculativeTest, DrawsAreReproducibleAndFollowTheLaw) {
  EXPECT_EQ(DrawAcceptedTokens(0.7, 4, 9, 3, 11), DrawAcceptedTokens(0.7, 4, 9, 3, 11));
  EXPECT_EQ(DrawAcceptedTokens(0, 4, 1, 2, 3), 1);
  EXPECT_EQ(DrawAcceptedTokens(1, 4, 1, 2, 3), 5);
  EXPECT_EQ(DrawAcceptedTokens(0.9, 0, 1, 2, 3), 1);
  const int n = 200000;
  double sum = 0;
  int ones = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t t = DrawAcceptedTokens(0.75, 4, 42, i % 1000, i / 1000);
    ASSERT_GE(t, 1);
    ASSERT_LE(t, 5);
    sum += static_cast<double>(t);
    ones += t == 1;
  }
  EXPECT_NEAR(sum / n, ExpectedAcceptedTokens(0.75, 4), 0.01);  // 2.7344
  EXPECT_NEAR(static_cast<double>(ones) / n, 0.25, 0.005);
  // Another seed gives other draws.
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    differ += DrawAcceptedTokens(0.5, 4, 1, i, 0) != DrawAcceptedTokens(0.5, 4, 2, i, 0);
  }
  EXPECT_GT(differ, 20);
}

// The scheduler with every draft accepted (alpha 1, k 3): a 9-token output is
// the prefill's token plus two decode steps of 4 (the second capped by the 4
// tokens still needed), and each step verifies 4 rows.
TEST(SpeculativeTest, SchedulerEmitsAcceptedTokensCappedByTheRequest) {
  SchedulerConfig c;
  c.kv_blocks = 100;
  c.watermark = 0;
  c.speculative_tokens = 3;
  c.acceptance_rate = 1;
  std::vector<int64_t> verify_rows;
  auto cost = [&](const IterationTotals& t) {
    if (t.decode_seqs > 0) verify_rows.push_back(t.decode_queries);
    IterationCost ic;
    ic.time = sim::Milliseconds(1);
    ic.compute = ic.time;
    return ic;
  };
  absl::StatusOr<ServingRun> run =
      SimulateServing({{sim::Time::Zero(), 100, 9}, {sim::Time::Zero(), 100, 7}}, c, cost, true);
  ASSERT_TRUE(run.ok()) << run.status();
  // Request 0: 1 + 4 + 4; request 1: 1 + 4 + 2 (capped: 2 rows in its second step).
  EXPECT_EQ(run->decode_steps, 4);
  EXPECT_EQ(run->decode_tokens, 8 + 6);
  EXPECT_EQ(verify_rows, (std::vector<int64_t>{8, 6}));
  for (const RequestRecord& r : run->requests) EXPECT_GT(r.finish, r.first_token);
  // alpha 0: one token per step, like no speculation, but still 1 + k rows verified.
  c.acceptance_rate = 0;
  verify_rows.clear();
  run = SimulateServing({{sim::Time::Zero(), 100, 9}}, c, cost, false);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->decode_steps, 8);
  EXPECT_EQ(run->decode_tokens, 8);
  EXPECT_EQ(verify_rows.front(), 4);
}

// A partly accepting drafter over many requests: the tokens per step average
// to the law's (no caps bind much at 200-token outputs), and the run is
// reproducible.
TEST(SpeculativeTest, SchedulerMeanTokensPerStepMatchesTheLaw) {
  SchedulerConfig c;
  c.kv_blocks = 100000;
  c.speculative_tokens = 4;
  c.acceptance_rate = 0.6;
  c.speculative_seed = 7;
  std::vector<ServingRequest> requests;
  for (int i = 0; i < 200; ++i) requests.push_back({sim::Time::Zero(), 64, 400});
  auto cost = [](const IterationTotals& t) {
    IterationCost ic;
    ic.time = sim::Microseconds(100) * t.tokens;
    ic.compute = ic.time;
    return ic;
  };
  absl::StatusOr<ServingRun> a = SimulateServing(requests, c, cost, false);
  absl::StatusOr<ServingRun> b = SimulateServing(requests, c, cost, false);
  ASSERT_TRUE(a.ok() && b.ok());
  const double mean = static_cast<double>(a->decode_tokens) / static_cast<double>(a->decode_steps);
  EXPECT_NEAR(mean, ExpectedAcceptedTokens(0.6, 4), 0.03);  // 2.3056
  EXPECT_EQ(a->decode_tokens, 200 * 399);
  EXPECT_EQ(a->end, b->end);
  EXPECT_EQ(a->decode_steps, b->decode_steps);
}

// A cache too small for every sequence's verified positions: sequences are
// preempted and recomputed, and every request still gets exactly its tokens.
// 8 requests of 32 + 64 tokens need 6 blocks of 16 each at the end, 48 in all;
// the cache holds 30.
TEST(SpeculativeTest, PreemptionUnderSpeculationStillFinishesEveryRequest) {
  SchedulerConfig c;
  c.kv_blocks = 30;
  c.watermark = 0;
  c.speculative_tokens = 4;
  c.acceptance_rate = 0.7;
  std::vector<ServingRequest> requests(8, {sim::Time::Zero(), 32, 64});
  auto cost = [](const IterationTotals& t) {
    IterationCost ic;
    ic.time = sim::Microseconds(100) * t.tokens;
    ic.compute = ic.time;
    return ic;
  };
  absl::StatusOr<ServingRun> run = SimulateServing(requests, c, cost, true);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_GT(run->preemptions, 0);
  for (const IterationRecord& it : run->iterations) EXPECT_LE(it.kv_blocks_used, 30);
  for (const RequestRecord& r : run->requests) EXPECT_GT(r.finish, r.first_token);
  // A re-prefill emits one token; every other token came from a decode step.
  EXPECT_EQ(run->decode_tokens + 8 + run->preemptions, 8 * 64);
}

class SpeculativeCostTest : public testing::DgxH100Test {
 protected:
  void SetUp() override {
    testing::DgxH100Test::SetUp();
    if (HasFatalFailure()) return;
    ServingModelSpec spec;
    spec.replica.model = *models::ModelCatalog::Default().Find("llama3-8b");
    spec.gpus = {0};
    absl::StatusOr<ServingCostModel> m = ServingCostModel::Create(spec, *kernels_, *network_);
    ASSERT_TRUE(m.ok()) << m.status();
    target_.emplace(*std::move(m));
  }

  // `seqs` decoding sequences at `context` tokens, each verifying 1 + drafted rows.
  static IterationTotals Decode(int64_t seqs, int64_t context, int64_t drafted) {
    std::vector<SequenceWork> w(
        seqs, {.new_tokens = 1 + drafted, .context = context, .decode = true, .samples = true});
    return Summarise(w);
  }

  std::optional<ServingCostModel> target_;
};

// Verifying 4 drafts at batch 1 streams the same 16 GB of weights as a decode
// step, so it costs about one step. At batch 256 its 1,280 GEMM rows are past
// the H100's ridge (989 TFLOP/s / 3.35 TB/s = 295 FLOPs per byte, about 295
// rows of 16-bit weights): 2 x 7.5e9 x 1280 = 19 TFLOP take ~25 ms against the
// decode step's ~5.6 ms of weights, while the 17 GB of KV reads stay the same,
// so the pass costs well over two decode steps.
TEST_F(SpeculativeCostTest, VerifyingIsNearlyFreeAtBatchOneAndNotAtBatch256) {
  const double one = target_->Cost(Decode(1, 512, 0)).compute.ToSeconds();
  const double verify_one = target_->Cost(Decode(1, 512, 4)).compute.ToSeconds();
  EXPECT_LT(verify_one, 1.1 * one);
  const double many = target_->Cost(Decode(256, 512, 0)).compute.ToSeconds();
  const double verify_many = target_->Cost(Decode(256, 512, 4)).compute.ToSeconds();
  EXPECT_GT(verify_many, 2.0 * many);
  // LM-head rows: 1 + k per sequence.
  EXPECT_EQ(Decode(3, 100, 4).sampled, 15);
  EXPECT_EQ(Decode(3, 100, 4).decode_queries, 15);
  EXPECT_EQ(Decode(3, 100, 4).decode_kv_tokens, 3 * 105);
}

// An EAGLE head's k steps each cost about a layer plus the LM head:
// (0.44 GB layer + 1.05 GB head + 0.07 GB projection) / 16.06 GB of a step
// is about 10% of a batch-1 decode step per draft step.
TEST_F(SpeculativeCostTest, HeadDraftingCostsAboutALayerAndTheHeadPerStep) {
  SpeculativeSpec spec;
  spec.method = SpeculativeMethod::kEagle;
  spec.num_tokens = 4;
  spec.acceptance_rate = 0.7;
  absl::StatusOr<SpeculativeCostModel> m =
      SpeculativeCostModel::Create(spec, *target_, *kernels_, *network_);
  ASSERT_TRUE(m.ok()) << m.status();
  const double step = target_->Cost(Decode(1, 512, 0)).compute.ToSeconds();
  const double draft = m->DraftCost(Decode(1, 512, 4)).compute.ToSeconds();
  EXPECT_GT(draft / 4, 0.06 * step);
  EXPECT_LT(draft / 4, 0.16 * step);
  // Total = verify + draft, host once.
  const IterationCost all = m->Cost(Decode(1, 512, 4));
  EXPECT_EQ(all.compute,
            target_->Cost(Decode(1, 512, 4)).compute + m->DraftCost(Decode(1, 512, 4)).compute);
  EXPECT_EQ(all.host, target_->Cost(Decode(1, 512, 4)).host);
  // Fewer drafted tokens, fewer draft steps; none without decodes.
  EXPECT_LT(m->DraftCost(Decode(1, 512, 2)).compute, m->DraftCost(Decode(1, 512, 4)).compute);
  EXPECT_EQ(m->DraftCost(Decode(1, 512, 0)).compute, sim::Duration::Zero());
}

// A head's first pass of a step takes every sequence's verified rows (1 + k),
// its later passes one row each (TensorRT-LLM's MTPEagleWorker, vLLM's
// EagleProposer), and the LM head one row per sequence. Llama 3 8B head at
// batch 256 with one draft: 512 rows x 2 x (218.1M + 2 x 4096^2) layer and
// projection FLOPs plus 256 rows x 2 x 4096 x 128,256 LM-head FLOPs, 5.27e11
// (3.98e11 if the pass took one row per sequence), attention aside.
TEST_F(SpeculativeCostTest, HeadFirstPassTakesTheVerifiedRows) {
  SpeculativeSpec spec;
  spec.method = SpeculativeMethod::kEagle;
  spec.num_tokens = 1;
  absl::StatusOr<SpeculativeCostModel> m =
      SpeculativeCostModel::Create(spec, *target_, *kernels_, *network_);
  ASSERT_TRUE(m.ok()) << m.status();
  const double expected = 512 * 2 * (218.1e6 + 2.0 * 4096 * 4096) + 256 * 2 * 4096 * 128256.0;
  EXPECT_NEAR(m->DraftCost(Decode(256, 512, 1)).flops, expected, 0.02 * expected);
}

// DeepSeek-V3's MTP module is the layer after the last (index 61), an MoE
// layer like every layer past the 3 dense-first ones; an EAGLE head keeps the
// shape of the target's first layer (dense here); a dense target's MTP layer
// stays dense.
TEST(SpeculativeDrafterTest, MtpHeadHasTheMlpOfTheLayerAfterTheLast) {
  models::ReplicaModel deepseek;
  deepseek.model = *models::ModelCatalog::Default().Find("deepseek-v3-671b");
  deepseek.tensor_parallel = 8;
  SpeculativeSpec mtp;
  mtp.method = SpeculativeMethod::kMtp;
  EXPECT_EQ(DrafterReplica(mtp, deepseek).model.num_moe_layers(), 1);
  SpeculativeSpec eagle;
  eagle.method = SpeculativeMethod::kEagle;
  EXPECT_EQ(DrafterReplica(eagle, deepseek).model.num_moe_layers(), 0);
  models::ReplicaModel llama;
  llama.model = *models::ModelCatalog::Default().Find("llama3-8b");
  EXPECT_EQ(DrafterReplica(mtp, llama).model.num_moe_layers(), 0);
  EXPECT_EQ(DrafterReplica(mtp, llama).model.num_layers, 1);
}

// Memory: a draft model adds its whole weights; a head one layer plus the
// projection (Llama 3 8B: 218.1M + 2 x 4096^2 = 251.7M parameters, 0.50 GB
// in BF16) and the KV of one layer (2 x 8 x 128 x 2 = 4 KiB per token).
TEST_F(SpeculativeCostTest, DrafterMemory) {
  const models::ReplicaModel target = target_->spec().replica;
  SpeculativeSpec head;
  head.method = SpeculativeMethod::kEagle;
  const DrafterMemory h = EstimateDrafterMemory(head, target);
  EXPECT_NEAR(static_cast<double>(h.weights.count()), 2.0 * (218.1e6 + 2.0 * 4096 * 4096), 2e6);
  EXPECT_EQ(h.kv_bytes_per_token.count(), 4096);
  SpeculativeSpec draft;
  draft.method = SpeculativeMethod::kDraft;
  draft.draft = *models::ModelCatalog::Default().Find("llama3-8b");
  const DrafterMemory d = EstimateDrafterMemory(draft, target);
  models::InferenceMemoryInputs in;
  in.replica = target;
  EXPECT_EQ(d.weights, models::EstimateInferenceMemory(in, sim::Bytes(0)).weights);
  EXPECT_EQ(d.kv_bytes_per_token.count(), 131072);
}

TEST_F(SpeculativeCostTest, RefusesPipelineParallelTargets) {
  ServingModelSpec spec = target_->spec();
  spec.replica.pipeline_parallel = 2;
  spec.gpus = {0, 1};
  absl::StatusOr<ServingCostModel> pp = ServingCostModel::Create(spec, *kernels_, *network_);
  ASSERT_TRUE(pp.ok()) << pp.status();
  absl::StatusOr<SpeculativeCostModel> m =
      SpeculativeCostModel::Create(SpeculativeSpec{}, *pp, *kernels_, *network_);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("inference.pipeline_parallel_size=1"));
  EXPECT_THAT(ParseSpeculativeMethod("medusa").status().message(),
              HasSubstr("inference.speculative.method"));
}

}  // namespace
}  // namespace clustersim::strategies
