// Resolve (resolve.h): defaults and derived sizes, the attention kernel,
// preset fields a scenario overrides, and the errors that name a field and its
// valid values (GPU, model, parallelism, recompute, precision, protocol).
#include "scenarios/input/resolve.h"

#include <string>

#include "gtest/gtest.h"
#include "scenarios/input/resolve_testing.h"

namespace clustersim::scenarios {
namespace {

using resolve_testing::Parse;

TEST(ResolveTest, FillsDefaultsAndDerivesDataParallel) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 16 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 8 }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.data_parallel, 2);
  EXPECT_EQ(r->parallel.global_batch_size, 2);  // micro-batch 1 x dp 2
  EXPECT_EQ(r->cluster.node_preset, "dgx-a100");
  EXPECT_EQ(r->cluster.num_nodes, 2);
  EXPECT_EQ(r->echo.parallelism().data_parallel_size(), 2);
  EXPECT_EQ(r->echo.training().precision(), "bf16");
  EXPECT_EQ(r->echo.model().hidden_size(), 6144);
  EXPECT_GT(r->pricing.usd_per_gpu_hour, 0);
}

TEST(ResolveTest, AttentionDefaultsToFlashAndNamesTheFieldWhenUnknown) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-22b" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model.attention_backend, models::AttentionBackend::kFlash);
  EXPECT_EQ(r->echo.training().attention(), "flash");

  s.mutable_training()->set_attention("unfused");
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model.attention_backend, models::AttentionBackend::kUnfused);
  EXPECT_EQ(r->echo.training().attention(), "unfused");

  s.mutable_training()->set_attention("sdpa");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("training.attention=\"sdpa\""), std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("use flash"), std::string::npos) << r.status();
}

// parallelism.moe_routing: uniform by default, round-robin echoed back, an
// unknown name refused with the field and the valid values.
TEST(ResolveTest, MoeRoutingDefaultsToUniformAndNamesTheFieldWhenUnknown) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "qwen3-30b-a3b" }
    parallelism { expert_model_parallel_size: 8 moe_token_dispatcher: "deepep" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.moe_routing, strategies::MoeRouting::kUniform);
  EXPECT_FALSE(r->echo.parallelism().has_moe_routing());

  s.mutable_parallelism()->set_moe_routing("round-robin");
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.moe_routing, strategies::MoeRouting::kRoundRobin);
  EXPECT_EQ(r->echo.parallelism().moe_routing(), "round-robin");

  s.mutable_parallelism()->set_moe_routing("balanced");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("parallelism.moe_routing"), std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("uniform or round-robin"), std::string::npos)
      << r.status();
}

// The layers run Megatron-Core's modules only under the megatron-core stack
// (the default), not under another profile.
TEST(ResolveTest, MegatronCoreModulesFollowTheStack) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" }
    model { preset: "gpt-22b" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->model.megatron_core_modules);
  s.mutable_training()->set_framework("pytorch-fsdp2");
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->model.megatron_core_modules);
}

// FP8 on an A100 is a hardware error (the part has no FP8 tensor cores),
// reported as such before the simulator's own "not supported yet".
TEST(ResolveTest, Fp8OnA100NamesTheGpu) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-22b" }
    training { precision: "fp8" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("training.precision"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("a100-sxm4-80gb"), std::string::npos) << r.status();
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  EXPECT_TRUE(Resolve(s).ok()) << Resolve(s).status();  // FP8 training runs on an H100
}

// training.attention_at_sustained_clock defaults to the profile's (on for
// pytorch-fsdp2, off for megatron-core); a setting overrides it and is
// echoed only where it departs from the profile's.
TEST(ResolveTest, AttentionAtSustainedClockDefaultsToTheProfile) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "llama3-8b" }
    training { framework: "pytorch-fsdp2" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->attention_at_sustained_clock);
  EXPECT_FALSE(r->echo.training().has_attention_at_sustained_clock());
  s.mutable_training()->set_attention_at_sustained_clock(false);
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->attention_at_sustained_clock);
  EXPECT_TRUE(r->echo.training().has_attention_at_sustained_clock());
  s.mutable_training()->clear_attention_at_sustained_clock();
  s.mutable_training()->set_framework("megatron-core");
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->attention_at_sustained_clock);
}

// training.fp8_recipe: delayed by default (echoed under fp8 only), current
// or mxfp8 when set; anything else names the field and the valid values.
// Float8 tensor-parallel gathers need FP8 training and sequence parallelism.
TEST(ResolveTest, Fp8TpGatherNeedsFp8AndSequenceParallel) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "llama3-8b" }
    parallelism { tensor_model_parallel_size: 8 sequence_parallel: true }
    training { precision: "fp8" fp8_tp_gather: true framework: "pytorch-fsdp2" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->model.fp8_tp_gather);
  EXPECT_TRUE(r->echo.training().fp8_tp_gather());
  s.mutable_training()->set_precision("bf16");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("training.fp8_tp_gather"), std::string::npos) << r.status();
  s.mutable_training()->set_precision("fp8");
  s.mutable_parallelism()->set_sequence_parallel(false);
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sequence_parallel"), std::string::npos) << r.status();
}

// "nvfp4" runs FP4 GEMMs under the NVFP4 recipe on Blackwell and is refused,
// naming the field and a fix, where there are no FP4 tensor cores or with an
// FP8 recipe.
TEST(ResolveTest, Nvfp4RunsOnBlackwellOnly) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "gb200-186gb" }
    model { preset: "gpt-22b" }
    training { precision: "nvfp4" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.precision, models::Dtype::kFp4);
  EXPECT_EQ(r->parallel.fp8_recipe, models::Fp8Recipe::kNvfp4);
  EXPECT_EQ(r->echo.training().precision(), "nvfp4");
  EXPECT_FALSE(r->echo.training().has_fp8_recipe());
  s.mutable_training()->set_fp8_recipe("mxfp8");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("training.fp8_recipe"), std::string::npos) << r.status();
  s.mutable_training()->clear_fp8_recipe();
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("training.precision=\"nvfp4\""), std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("use fp8 or bf16"), std::string::npos) << r.status();
}

TEST(ResolveTest, Fp8RecipeDefaultsToDelayedAndNamesTheFieldWhenBad) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" }
    model { preset: "gpt-22b" }
    training { precision: "fp8" }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.fp8_recipe, models::Fp8Recipe::kDelayed);
  EXPECT_EQ(r->echo.training().fp8_recipe(), "delayed");
  s.mutable_training()->set_fp8_recipe("current");
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.fp8_recipe, models::Fp8Recipe::kCurrent);
  // MXFP8 needs Blackwell (compute capability 10.x).
  s.mutable_training()->set_fp8_recipe("mxfp8");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("training.fp8_recipe=\"mxfp8\""), std::string::npos);
  s.mutable_cluster()->set_gpu("b200-sxm-180gb");
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.fp8_recipe, models::Fp8Recipe::kMxfp8);
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  s.mutable_training()->set_fp8_recipe("tensorwise");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("training.fp8_recipe"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("delayed, current, mxfp8 or rowwise"), std::string::npos);
  s.mutable_training()->set_precision("bf16");
  s.mutable_training()->clear_fp8_recipe();
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->echo.training().has_fp8_recipe());
}

TEST(ResolveTest, FlagsOverridePresetFields) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-22b" num_layers: 2 }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model.num_layers, 2);
  EXPECT_EQ(r->model.hidden_size, 6144);
}

TEST(ResolveTest, CustomModelNeedsItsShape) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { num_layers: 2 hidden_size: 1024 }
  )pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("model.num_attention_heads is required"),
            std::string::npos)
      << r.status();
}

TEST(ResolveTest, UnknownGpuListsValidNames) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100" }
    model { preset: "gpt-22b" }
  )pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cluster.gpu"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("h100-sxm5-80gb"), std::string::npos) << r.status();
}

TEST(ResolveTest, UnknownModelListsValidNames) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-23b" }
  )pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("model.preset"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("gpt-22b"), std::string::npos) << r.status();
}

TEST(ResolveTest, BadParallelismNamesTheField) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 8 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 3 }
  )pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("parallelism.tensor_model_parallel_size=3"),
            std::string::npos)
      << r.status();
}

TEST(ResolveTest, BadRecomputeAndPrecision) {
  EXPECT_FALSE(Resolve(Parse(R"pb(
                 cluster { gpu: "a100-sxm4-80gb" }
                 model { preset: "gpt-22b" }
                 training { recompute_granularity: "most" }
               )pb"))
                   .ok());
  absl::StatusOr<ResolvedScenario> fp8 = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-22b" }
    training { precision: "fp8" }
  )pb"));
  ASSERT_FALSE(fp8.ok());
  EXPECT_NE(fp8.status().message().find("training.precision"), std::string::npos);
}

TEST(ResolveTest, CollectiveProtocolDefaultsToAutoAndNamesTheFieldWhenBad) {
  absl::StatusOr<ResolvedScenario> def = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-22b" }
  )pb"));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->protocol, topology::Protocol::kAuto);
  EXPECT_EQ(def->echo.network().collective_protocol(), "auto");
  absl::StatusOr<ResolvedScenario> ll = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-22b" }
    network { collective_protocol: "LL128" }
  )pb"));
  ASSERT_TRUE(ll.ok()) << ll.status();
  EXPECT_EQ(ll->protocol, topology::Protocol::kLl128);
  absl::StatusOr<ResolvedScenario> bad = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "gpt-22b" }
    network { collective_protocol: "fast" }
  )pb"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("network.collective_protocol"), std::string::npos);
  EXPECT_NE(bad.status().message().find("ll128"), std::string::npos);
}

TEST(ResolveTest, MissingGpuIsAnError) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(model { preset: "gpt-22b" })pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cluster.gpu is required"), std::string::npos);
}

}  // namespace
}  // namespace clustersim::scenarios
