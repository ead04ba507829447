#include "scenarios/serve/serve_speculative.h"

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/serve/serve_runner.h"
#include "strategies/serving_speculative.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<config::ServeResult> Serve(const config::Scenario& s) {
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  if (!r.ok()) return r.status();
  return RunServe(*r, {.curve = false});
}

// One GPU, a fixed batch, fixed lengths.
config::Scenario Batch(const std::string& gpu, const std::string& model, int batch, int prompt,
                       int output) {
  config::Scenario s;
  s.set_name("spec");
  s.mutable_cluster()->set_gpu(gpu);
  s.mutable_model()->set_preset(model);
  config::InferenceWorkload* w = s.mutable_inference()->mutable_workload();
  w->set_kind("fixed-batch");
  w->set_batch_size(batch);
  w->mutable_prompt_length()->set_value(prompt);
  w->mutable_output_length()->set_value(output);
  return s;
}

config::SpeculativeConfig* Eagle(config::Scenario* s, int k, double alpha) {
  config::SpeculativeConfig* sp = s->mutable_inference()->mutable_speculative();
  sp->set_method("eagle");
  sp->set_num_speculative_tokens(k);
  sp->set_acceptance_rate(alpha);
  return sp;
}

config::SpeculativeConfig* Draft(config::Scenario* s, const std::string& preset) {
  config::SpeculativeConfig* sp = Eagle(s, 4, 0.5);
  sp->set_method("draft");
  sp->mutable_draft_model()->set_preset(preset);
  return sp;
}

// Off unless asked: the shipped example's echo and result carry no
// speculative section.
TEST(ServeSpeculativeTest, OffByDefault) {
  absl::StatusOr<config::Scenario> s =
      LoadScenarioFile(std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) +
                       "/scenarios/examples/serve-llama3-8b-h100.textproto");
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<ResolvedServe> r = ResolveServe(*s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->speculative.has_value());
  EXPECT_FALSE(r->echo.inference().has_speculative());
  EXPECT_EQ(r->scheduler.speculative_tokens, 0);
  EXPECT_EQ(r->memory.drafter_weights.count(), 0);
}

TEST(ServeSpeculativeTest, BadFieldsAreNamedWithAFix) {
  auto error = [](const config::Scenario& s) {
    absl::StatusOr<ResolvedServe> r = ResolveServe(s);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  const config::Scenario base = Batch("h100-sxm5-80gb", "llama3-8b", 1, 128, 128);
  config::Scenario s = base;
  Eagle(&s, 4, 1.4);
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.acceptance_rate=1.4 must be in [0, 1]"));
  Eagle(&s, 4, -0.1);
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.acceptance_rate=-0.1"));
  Eagle(&s, 0, 0.5);
  EXPECT_THAT(error(s),
              HasSubstr("inference.speculative.num_speculative_tokens=0 must be between"));
  Eagle(&s, 17, 0.5);
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.num_speculative_tokens=17"));
  Eagle(&s, 4, 0.5)->set_method("lookahead");
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.method=\"lookahead\" is not known"));
  s = base;
  s.mutable_inference()->mutable_speculative()->set_num_speculative_tokens(4);
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.acceptance_rate is required"));
  // Draft models: required for "draft", known, same vocabulary.
  s = base;
  Eagle(&s, 4, 0.5)->set_method("draft");
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.draft_model is required"));
  Draft(&s, "llama9-1b");
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.draft_model.preset"));
  EXPECT_THAT(error(s), HasSubstr("llama3-8b"));  // the list of presets
  Draft(&s, "llama2-7b");
  EXPECT_THAT(error(s), HasSubstr("inference.speculative.draft_model.vocab_size=32000 differs "
                                  "from model.vocab_size=128256"));
  s.mutable_inference()->mutable_speculative()->set_method("eagle");
  EXPECT_THAT(error(s), HasSubstr("used only by method \"draft\""));
  s = base;
  s.mutable_inference()->set_pipeline_parallel_size(2);
  Eagle(&s, 4, 0.5);
  EXPECT_THAT(error(s), HasSubstr("inference.pipeline_parallel_size=1"));
}

// A draft model (Llama 3.2 1B's shape, inline) takes memory: its weights in
// BF16, 16 layers of 60.82M (attention 10.49M, MLP 3 x 2048 x 8192) plus the
// tied 128256 x 2048 embedding (262.7M) plus what an inline model adds by
// default (learned positions 8192 x 2048 = 16.8M, biases 0.38M): 1.2529e9
// parameters = 2.334 GiB; and 16 x 2 x 8 x 64 x 2 = 32 KiB of KV per token,
// so the target keeps fewer KV blocks.
TEST(ServeSpeculativeTest, DraftModelMemoryComesOutOfTheKvCache) {
  config::Scenario s = Batch("h100-sxm5-80gb", "llama3-8b", 1, 512, 128);
  absl::StatusOr<ResolvedServe> plain = ResolveServe(s);
  ASSERT_TRUE(plain.ok());
  config::SpeculativeConfig* sp = s.mutable_inference()->mutable_speculative();
  sp->set_acceptance_rate(0.6);
  config::DraftModelConfig* d = sp->mutable_draft_model();
  d->set_num_layers(16);
  d->set_hidden_size(2048);
  d->set_ffn_hidden_size(8192);
  d->set_num_attention_heads(32);
  d->set_num_query_groups(8);
  d->set_seq_length(8192);
  d->set_vocab_size(128256);
  d->set_swiglu(true);
  d->set_norm("rmsnorm");
  d->set_tied_embeddings(true);
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->speculative.has_value());
  EXPECT_EQ(r->speculative->method, strategies::SpeculativeMethod::kDraft);
  EXPECT_EQ(r->echo.inference().speculative().method(), "draft");
  EXPECT_NEAR(r->memory.drafter_weights.ToGiB(), 2.334, 0.005);
  EXPECT_EQ(r->memory.drafter_kv_bytes_per_token.count(), 16 * 2 * 8 * 64 * 2);
  absl::StatusOr<config::ServeResult> with = RunServe(*r, {.curve = false});
  absl::StatusOr<config::ServeResult> without = RunServe(*plain, {.curve = false});
  ASSERT_TRUE(with.ok() && without.ok()) << with.status();
  EXPECT_LT(with->memory().kv_blocks(), without->memory().kv_blocks());
  EXPECT_EQ(with->speculative().draft_model(), "draft");
  EXPECT_NEAR(with->speculative().drafter_weights_gib(), 2.334, 0.005);
  EXPECT_FALSE(without->has_speculative());
}

// The speed-up shrinks under load. Llama 3 8B BF16 on one H100 with an EAGLE
// head, k 4, alpha 0.8 (3.36 tokens per step): at batch 1 a step streams the
// weights either way, so TPOT falls by the tokens per step over 1 + the
// drafting's share (4 steps of ~10% of a decode step each: 3.36 / 1.4 = 2.4);
// at batch 256 verifying 5 rows per sequence is compute-bound and costs over
// two decode steps (strategies/serving_speculative_test.cc), so the speed-up
// is below 3.36 / 2 = 1.68 and well below batch 1's.
TEST(ServeSpeculativeTest, SpeedUpShrinksFromBatch1ToBatch256) {
  auto speedup = [](int batch) {
    config::Scenario s = Batch("h100-sxm5-80gb", "llama3-8b", batch, 512, 256);
    Eagle(&s, 4, 0.8);
    absl::StatusOr<config::ServeResult> r = Serve(s);
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR(r->speculative().mean_accepted_tokens_per_step(),
                strategies::ExpectedAcceptedTokens(0.8, 4), 0.25 + 2.0 / batch);
    return r->speculative().tpot_speedup();
  };
  const double one = speedup(1), many = speedup(256);
  EXPECT_GT(one, 2.0);
  EXPECT_LT(many, 3.36 / 2);
  EXPECT_LT(many, 0.6 * one);
}

// Published speed-ups at batch 1, predicted from the published mean accepted
// tokens per step (acceptance length, AL, bonus token included; alpha solved
// from (1 - alpha^(k+1)) / (1 - alpha) = AL, nothing fitted).
//
// vLLM V1 with an EAGLE-1 head (yuhuili/EAGLE-LLaMA3.1-Instruct-8B, a chain of
// k drafts, the head our "eagle" method models) on Llama 3.1 8B Instruct,
// MT-bench, batch 1, TPOT in ms: vanilla 7.07; k 2: AL 2.10, 4.37 ms; k 3:
// 2.29, 4.29; k 4: 2.39, 4.48; k 5: 2.43, 4.71; k 6: 2.45, 4.94; k 7: 2.47,
// 5.20 (github.com/vllm-project/vllm/issues/20780, tables "AL" and "TPOT
// ms"). The GPU is an H100, as in the same author's runs of this setup (vllm
// pull request 16937: "Output tokens/s on H100 BS1"); our batch-1 TPOT without
// speculation is 7.0 ms. MT-bench prompts are short: 128 in / 256 out assumed.
// Measured here: +6% at k 2 to +21% at k 7. The errors grow with k because the
// drafting loop's per-step launch and bookkeeping time is not modelled (the
// table implies ~0.73 ms per extra draft step, the model ~0.5 ms), so the
// bound is 25%; the best k (3) is the published one.
TEST(ServeSpeculativeTest, ReproducesPublishedSpeedUps) {
  struct Row {
    int k;
    double al, tpot_ms;
  };
  constexpr double kVanillaMs = 7.07;
  double best = 0;
  int best_k = 0;
  for (const Row& row : {Row{2, 2.10, 4.37}, Row{3, 2.29, 4.29}, Row{4, 2.39, 4.48},
                         Row{5, 2.43, 4.71}, Row{6, 2.45, 4.94}, Row{7, 2.47, 5.20}}) {
    config::Scenario s = Batch("h100-sxm5-80gb", "llama3.1-8b", 1, 128, 256);
    Eagle(&s, row.k, strategies::AcceptanceRateForMeanTokens(row.al, row.k));
    absl::StatusOr<config::ServeResult> r = Serve(s);
    ASSERT_TRUE(r.ok()) << r.status();
    const double published = kVanillaMs / row.tpot_ms;
    const double predicted = r->speculative().tpot_speedup();
    EXPECT_NEAR(predicted / published, 1.0, 0.25)
        << "k " << row.k << ": predicted " << predicted << "x, published " << published << "x";
    if (predicted > best) {
      best = predicted;
      best_k = row.k;
    }
  }
  EXPECT_EQ(best_k, 3);
}

}  // namespace
}  // namespace clustersim::scenarios
