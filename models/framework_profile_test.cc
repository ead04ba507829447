#include "models/framework_profile.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

// One valid profile; tests splice faults into it.
std::string Profile(const std::string& name, const std::string& extra = "") {
  return R"pb(framework { name: ")pb" + name +
         R"pb("
              display_name: "d"
              source: "s"
              attention: "flash"
              gemm_factor {
                value: 0.9
                kind: "fitted"
                training_split: "t"
                fit_script: "f"
                source: "s"
              }
              attention_factor {
                value: 0.6
                kind: "borrowed"
                training_split: "t"
                fit_script: "f"
                source: "s"
              }
              host_us_per_op { value: 50 kind: "prior" source: "s" }
              pipeline_p2p_host_us { value: 0 kind: "prior" source: "s" }
              grad_reduce_bytes { value: 2 kind: "prior" source: "s" }
              supports: "tensor_parallel")pb" +
         extra + "}\n";
}

std::string Error(const std::string& text) {
  absl::StatusOr<FrameworkCatalog> c = FrameworkCatalog::Parse(text, "f");
  return c.ok() ? "" : std::string(c.status().message());
}

TEST(FrameworkProfileTest, ShippedCatalogHasTheDefaultAndEveryStackTheValidationNames) {
  const FrameworkCatalog& c = FrameworkCatalog::Default();
  for (const char* name :
       {"megatron-core", "megatron-deepspeed", "pytorch-fsdp", "pytorch-fsdp2", "jax-xla"}) {
    absl::StatusOr<const FrameworkProfile*> p = c.Find(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_GT((*p)->gemm_factor.value, 0);
    EXPECT_LE((*p)->gemm_factor.value, 1);
  }
  // The default carries the Megatron-Core numbers, DeepSpeed's pipeline engine
  // its blocking sends, FSDP-only stacks no model parallelism.
  const FrameworkProfile& core = **c.Find(FrameworkCatalog::kDefault);
  EXPECT_EQ(core.pipeline_p2p_host_us.value, 0);
  EXPECT_TRUE(core.Supports("tp_comm_overlap"));
  EXPECT_GT((*c.Find("megatron-deepspeed"))->pipeline_p2p_host_us.value, 0);
  EXPECT_EQ((*c.Find("megatron-deepspeed"))->attention, AttentionBackend::kUnfused);
  EXPECT_FALSE((*c.Find("pytorch-fsdp"))->Supports("tensor_parallel"));
  EXPECT_FALSE((*c.Find("pytorch-fsdp"))->Supports("pipeline_parallel"));
  EXPECT_TRUE((*c.Find("pytorch-fsdp"))->Supports("zero"));
}

TEST(FrameworkProfileTest, ParsesValuesWithProvenance) {
  absl::StatusOr<FrameworkCatalog> c =
      FrameworkCatalog::Parse(Profile("megatron-core") + Profile("b"), "f");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->profiles().size(), 2u);
  EXPECT_EQ(c->profiles()[0].name, "b");  // sorted
  const FrameworkProfile& p = **c->Find("megatron-core");
  EXPECT_EQ(p.gemm_factor.value, 0.9);
  EXPECT_EQ(p.gemm_factor.kind, "fitted");
  EXPECT_EQ(p.attention_factor.training_split, "t");
  EXPECT_EQ(p.host_us_per_op.value, 50);
  EXPECT_TRUE(p.Supports("tensor_parallel"));
  EXPECT_FALSE(p.Supports("fp8"));
}

// The attention kernel ratios are optional: unset they are 1 (FlashAttention-2);
// set, they are checked like any other value. llm-foundry's Triton kernel ships
// below 1 in both passes, slower in the backward.
TEST(FrameworkProfileTest, AttentionKernelRatiosDefaultToFlashAttention2) {
  absl::StatusOr<FrameworkCatalog> c = FrameworkCatalog::Parse(
      Profile("megatron-core") +
          Profile("b", "attention_kernel_forward { value: 0.7 kind: \"prior\" source: \"s\" }"),
      "f");
  ASSERT_TRUE(c.ok()) << c.status();
  const FrameworkProfile& core = **c->Find("megatron-core");
  EXPECT_EQ(core.attention_kernel_forward.value, 1);
  EXPECT_EQ(core.attention_kernel_backward.value, 1);
  EXPECT_EQ((*c->Find("b"))->attention_kernel_forward.value, 0.7);
  EXPECT_EQ((*c->Find("b"))->attention_kernel_backward.value, 1);
  EXPECT_NE(Error(Profile("megatron-core",
                          "attention_kernel_backward { value: 0 kind: \"prior\" source: \"s\" }"))
                .find("attention_kernel_backward.value=0 must be in (0, 1]"),
            std::string::npos);

  const FrameworkProfile& fsdp = **FrameworkCatalog::Default().Find("pytorch-fsdp");
  EXPECT_LT(fsdp.attention_kernel_forward.value, 1);
  EXPECT_LT(fsdp.attention_kernel_backward.value, fsdp.attention_kernel_forward.value);
  EXPECT_EQ((*FrameworkCatalog::Default().Find("pytorch-fsdp2"))->attention_kernel_forward.value,
            1);
}

// Elementwise kernels are optional: unset, fused (every shipped stack).
TEST(FrameworkProfileTest, ElementwiseKernelsDefaultToFused) {
  absl::StatusOr<FrameworkCatalog> c = FrameworkCatalog::Parse(
      Profile("megatron-core") + Profile("b", "elementwise: \"eager\""), "f");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c->Find("megatron-core"))->elementwise, ElementwiseKernels::kFused);
  EXPECT_EQ((*c->Find("b"))->elementwise, ElementwiseKernels::kEager);
  for (const FrameworkProfile& p : FrameworkCatalog::Default().profiles()) {
    EXPECT_EQ(p.elementwise, ElementwiseKernels::kFused) << p.name;
  }
}

TEST(FrameworkProfileTest, UnknownNameListsTheProfiles) {
  const std::string message(FrameworkCatalog::Default().Find("deepspeed-zero").status().message());
  EXPECT_NE(message.find("training.framework='deepspeed-zero' is not known"), std::string::npos);
  EXPECT_NE(message.find("megatron-core"), std::string::npos);
  EXPECT_NE(message.find("pytorch-fsdp2"), std::string::npos);
}

TEST(FrameworkProfileTest, MalformedProfilesAreRefusedNamingTheField) {
  EXPECT_NE(Error(Profile("b")).find("no profile named 'megatron-core'"), std::string::npos);
  EXPECT_NE(Error(Profile("megatron-core") + Profile("megatron-core")).find("duplicate name"),
            std::string::npos);
  std::string p = Profile("megatron-core");
  std::string bad = p;
  bad.replace(bad.find("value: 0.9"), 10, "value: 1.5");
  EXPECT_NE(Error(bad).find("gemm_factor.value=1.5 must be in (0, 1]"), std::string::npos);
  bad = p;
  bad.replace(bad.find("kind: \"fitted\""), 14, "kind: \"guess\"");
  EXPECT_NE(Error(bad).find("gemm_factor.kind='guess' is not known"), std::string::npos);
  bad = p;
  bad.replace(bad.find("value: 50 kind: \"prior\""), 23, "value: 50 kind: \"fitted\"");
  EXPECT_NE(Error(bad).find("host_us_per_op: a fitted value states its training_split"),
            std::string::npos);
  bad = p;
  bad.replace(bad.find("value: 50"), 9, "value: -1");
  EXPECT_NE(Error(bad).find("host_us_per_op.value=-1 must be in [0, 1e+06]"), std::string::npos);
  bad = p;
  bad.replace(bad.find("attention: \"flash\""), 18, "attention: \"paged\"");
  EXPECT_NE(Error(bad).find("attention='paged' is not known"), std::string::npos);
  EXPECT_NE(Error(Profile("megatron-core", "elementwise: \"inductor\""))
                .find(".elementwise=\"inductor\" is not known; use fused"),
            std::string::npos)
      << Error(Profile("megatron-core", "elementwise: \"inductor\""));
  EXPECT_NE(Error(Profile("megatron-core", "supports: \"warp_speed\""))
                .find("'warp_speed' is not a feature"),
            std::string::npos);
  EXPECT_NE(Error("framework { nonsense: 1 }").find("not a FrameworkFile"), std::string::npos);
}

// FP8 amax reduction is optional (unset: none), 0 or 1; only Megatron-Core's
// profile has it (Transformer Engine delayed scaling over the stage).
TEST(FrameworkProfileTest, Fp8AmaxReductionIsZeroOrOneAndOnlyMegatronCoreHasIt) {
  absl::StatusOr<FrameworkCatalog> c = FrameworkCatalog::Parse(
      Profile("megatron-core") +
          Profile("b", "fp8_amax_reduction { value: 1 kind: \"prior\" source: \"s\" }"),
      "f");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c->Find("megatron-core"))->fp8_amax_reduction.value, 0);
  EXPECT_EQ((*c->Find("b"))->fp8_amax_reduction.value, 1);
  EXPECT_NE(Error(Profile("megatron-core",
                          "fp8_amax_reduction { value: 0.5 kind: \"prior\" source: \"s\" }"))
                .find("fp8_amax_reduction.value=0.5 must be 0 (none) or 1"),
            std::string::npos);
  const FrameworkCatalog& shipped = FrameworkCatalog::Default();
  EXPECT_EQ((*shipped.Find("megatron-core"))->fp8_amax_reduction.value, 1);
  for (const char* other : {"pytorch-fsdp", "pytorch-fsdp2", "megatron-deepspeed", "jax-xla"}) {
    EXPECT_EQ((*shipped.Find(other))->fp8_amax_reduction.value, 0) << other;
  }
}

// Attention at the sustained clock is optional (unset: off), 0 or 1; the
// shipped FSDP profiles, whose attention factors are kernel-benchmark ratios,
// have it, and the profiles whose factor was fitted or borrowed do not.
TEST(FrameworkProfileTest, AttentionAtSustainedClockIsZeroOrOneAndOnlyFsdpHasIt) {
  const std::string on =
      "attention_at_sustained_clock { value: 1 kind: \"prior\" source: \"s\" }";
  absl::StatusOr<FrameworkCatalog> c =
      FrameworkCatalog::Parse(Profile("megatron-core") + Profile("b", on), "f");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c->Find("megatron-core"))->attention_at_sustained_clock.value, 0);
  EXPECT_EQ((*c->Find("b"))->attention_at_sustained_clock.value, 1);
  const std::string two =
      "attention_at_sustained_clock { value: 0.5 kind: \"prior\" source: \"s\" }";
  EXPECT_NE(Error(Profile("megatron-core", two))
                .find("attention_at_sustained_clock.value=0.5 must be 0"),
            std::string::npos);
  const FrameworkCatalog& shipped = FrameworkCatalog::Default();
  for (const char* fsdp : {"pytorch-fsdp", "pytorch-fsdp2"}) {
    EXPECT_EQ((*shipped.Find(fsdp))->attention_at_sustained_clock.value, 1) << fsdp;
  }
  for (const char* other : {"megatron-core", "megatron-deepspeed", "jax-xla"}) {
    EXPECT_EQ((*shipped.Find(other))->attention_at_sustained_clock.value, 0) << other;
  }
}

// The data-loading host sync is 0 or 1 (unset: 0); only Megatron-DeepSpeed's
// profile, whose broadcast_data reads the batch sizes back to the host, has it.
TEST(FrameworkProfileTest, DataBroadcastHostSyncIsZeroOrOneAndOnlyMegatronDeepSpeedHasIt) {
  absl::StatusOr<FrameworkCatalog> c = FrameworkCatalog::Parse(
      Profile("megatron-core") +
          Profile("b", "data_broadcast_host_sync { value: 1 kind: \"prior\" source: \"s\" }"),
      "f");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c->Find("megatron-core"))->data_broadcast_host_sync.value, 0);
  EXPECT_EQ((*c->Find("b"))->data_broadcast_host_sync.value, 1);
  EXPECT_NE(Error(Profile("b", "data_broadcast_host_sync { value: 0.5 kind: \"prior\" source: "
                               "\"s\" }"))
                .find("data_broadcast_host_sync.value=0.5 must be 0 (no sync) or 1"),
            std::string::npos);
  const FrameworkCatalog& shipped = FrameworkCatalog::Default();
  EXPECT_EQ((*shipped.Find("megatron-deepspeed"))->data_broadcast_host_sync.value, 1);
  for (const char* other : {"megatron-core", "pytorch-fsdp", "pytorch-fsdp2", "jax-xla"}) {
    EXPECT_EQ((*shipped.Find(other))->data_broadcast_host_sync.value, 0) << other;
  }
}

// The fused softmax's key limit is optional (unset: the kernel always
// applies) and a whole number; only Megatron-DeepSpeed's profile states it.
TEST(FrameworkProfileTest, FusedSoftmaxMaxKeysIsAWholeNumberAndOnlyMegatronDeepSpeedHasIt) {
  absl::StatusOr<FrameworkCatalog> c = FrameworkCatalog::Parse(
      Profile("megatron-core") +
          Profile("b", "fused_softmax_max_keys { value: 2048 kind: \"prior\" source: \"s\" }"),
      "f");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c->Find("megatron-core"))->fused_softmax_max_keys.value, 0);
  EXPECT_EQ((*c->Find("b"))->fused_softmax_max_keys.value, 2048);
  EXPECT_NE(Error(Profile("b", "fused_softmax_max_keys { value: 20.5 kind: \"prior\" source: "
                               "\"s\" }"))
                .find("fused_softmax_max_keys.value=20.5 must be a whole number"),
            std::string::npos);
  EXPECT_NE(Error(Profile("b", "fused_softmax_max_keys { value: -1 kind: \"prior\" source: "
                               "\"s\" }"))
                .find("fused_softmax_max_keys.value=-1 must be in [0, "),
            std::string::npos);
  const FrameworkCatalog& shipped = FrameworkCatalog::Default();
  EXPECT_EQ((*shipped.Find("megatron-deepspeed"))->fused_softmax_max_keys.value, 2048);
  for (const char* other : {"megatron-core", "pytorch-fsdp", "pytorch-fsdp2", "jax-xla"}) {
    EXPECT_EQ((*shipped.Find(other))->fused_softmax_max_keys.value, 0) << other;
  }
}

}  // namespace
}  // namespace clustersim::models
