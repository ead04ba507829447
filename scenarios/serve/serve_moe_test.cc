// Serving the MoE / latent-attention presets end to end: the shipped
// DeepSeek-V3 example with data-parallel attention and expert parallelism,
// against the same deployment with every expert tensor-parallel, and the
// errors of inference.expert_parallel_size.
#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/serve/serve_runner.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

config::Scenario DeepSeekExample() {
  absl::StatusOr<config::Scenario> s =
      LoadScenarioFile(std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) +
                       "/scenarios/examples/serve-deepseek-v3-h200.textproto");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

absl::StatusOr<config::ServeResult> Serve(const config::Scenario& s) {
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  if (!r.ok()) return r.status();
  return RunServe(*r, {.curve = false});
}

// Weights per GPU: with EP everything but the 656B routed-expert weights is
// whole on every GPU (FP8: ~15 GB + 656/8 GB ~ 97 GB, 16-bit embeddings and
// norms on top); with TP only, 671/8 GB ~ 84 GB. The latent FP8 cache (61 x
// 576 B per token) is split over the GPUs' own sequences under EP.
TEST(ServeMoeTest, DeepSeekV3ExpertParallelAgainstTensorParallel) {
  const config::Scenario ep = DeepSeekExample();
  absl::StatusOr<ResolvedServe> r = ResolveServe(ep);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory.replica.expert_parallel, 8);
  EXPECT_EQ(r->echo.inference().expert_parallel_size(), 8);
  absl::StatusOr<config::ServeResult> with_ep = Serve(ep);
  ASSERT_TRUE(with_ep.ok()) << with_ep.status();
  config::Scenario tp = ep;
  tp.mutable_inference()->clear_expert_parallel_size();
  absl::StatusOr<config::ServeResult> with_tp = Serve(tp);
  ASSERT_TRUE(with_tp.ok()) << with_tp.status();
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_GT(with_ep->memory().weights_gib(), 95e9 / gib);
  EXPECT_LT(with_ep->memory().weights_gib(), 102e9 / gib);
  EXPECT_GT(with_tp->memory().weights_gib(), 83e9 / gib);
  EXPECT_LT(with_tp->memory().weights_gib(), 87e9 / gib);
  // Decode of a 671B model in FP8 on 8 GPUs reads ~37 GB of active weights
  // per step at batch 1 spread over 8 x 4.8 TB/s: TPOT of at least ~1 ms;
  // all 256 requests are simulated.
  EXPECT_GT(with_ep->tpot_ms().p50(), 1.0);
  EXPECT_GT(with_tp->tpot_ms().p50(), 1.0);
  EXPECT_EQ(with_ep->num_requests(), 256);
}

TEST(ServeMoeTest, ExpertParallelErrorsNameTheField) {
  config::Scenario s = DeepSeekExample();
  s.mutable_inference()->set_expert_parallel_size(4);
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("inference.expert_parallel_size=4"));
  s.mutable_inference()->set_expert_parallel_size(0);
  EXPECT_THAT(ResolveServe(s).status().message(), HasSubstr("inference.expert_parallel_size=0"));
  s.mutable_model()->set_preset("llama3-70b");
  s.mutable_inference()->set_expert_parallel_size(8);
  EXPECT_THAT(ResolveServe(s).status().message(), HasSubstr("mixture-of-experts"));
}

}  // namespace
}  // namespace clustersim::scenarios
