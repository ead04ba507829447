// Resolve (resolve.h) of training.cuda_graph_scope and
// parallelism.moe_pad_expert_input_to_capacity: echoed, refused naming the
// field where Megatron-Core refuses, and a host-bound MoE step runs faster
// with its layers captured.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/resolve_testing.h"

namespace clustersim::scenarios {
namespace {

using resolve_testing::Parse;
using resolve_testing::StepSeconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

config::Scenario Qwen() {
  return Parse(R"pb(
    cluster { gpu: "b200-sxm-180gb" num_gpus: 8 }
    model { preset: "qwen3-30b-a3b" seq_length: 4096 }
    training { micro_batch_size: 1 global_batch_size: 64 precision: "bf16" }
    parallelism { expert_model_parallel_size: 8 expert_tensor_parallel_size: 1 }
  )pb");
}

TEST(ResolveCudaGraphTest, ScopesAreEchoedAndCheckedAgainstTheDispatcher) {
  config::Scenario s = Qwen();
  s.mutable_training()->add_cuda_graph_scope("attn");
  s.mutable_training()->add_cuda_graph_scope("moe_router");
  s.mutable_training()->add_cuda_graph_scope("moe_preprocess");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->echo.training().cuda_graph_scope(),
              ElementsAre("attn", "moe_router", "moe_preprocess"));

  s.mutable_training()->clear_cuda_graph_scope();
  s.mutable_training()->add_cuda_graph_scope("full");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("moe_pad_expert_input_to_capacity"));
  s.mutable_parallelism()->set_moe_pad_expert_input_to_capacity(true);
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->echo.parallelism().moe_pad_expert_input_to_capacity());

  s.mutable_training()->add_cuda_graph_scope("attn");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("training.cuda_graph_scope"));
}

// Qwen3-30B-A3B at micro-batch 1 on B200: 16 local experts of 768, whose
// grouped GEMMs launch one kernel per expert after the dispatcher's sync, is
// host-bound; padding removes the sync and whole-layer graphs the launches.
TEST(ResolveCudaGraphTest, GraphsAndPaddingShortenAHostBoundMoeStep) {
  config::Scenario s = Qwen();
  const double eager = StepSeconds(s);
  s.mutable_parallelism()->set_moe_pad_expert_input_to_capacity(true);
  const double padded = StepSeconds(s);
  s.mutable_training()->add_cuda_graph_scope("full");
  const double graphed = StepSeconds(s);
  EXPECT_LT(padded, eager);
  EXPECT_LT(graphed, padded * 0.9);
}

TEST(ResolveCudaGraphTest, PaddingNeedsExperts) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "llama3-8b" }
    parallelism { moe_pad_expert_input_to_capacity: true }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("mixture-of-experts"));
}

}  // namespace
}  // namespace clustersim::scenarios
