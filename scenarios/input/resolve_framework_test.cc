// Resolve (resolve.h) of the training stack: training.framework's profile
// and the fields it supplies, the elementwise kernels, and the framework
// attention and GEMM factors, each echoed and acting on the step time.
#include <string>

#include "gtest/gtest.h"
#include "models/framework_profile.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/resolve_testing.h"

namespace clustersim::scenarios {
namespace {

using resolve_testing::Parse;
using resolve_testing::StepSeconds;

const models::FrameworkProfile& DefaultStack() {
  return **models::FrameworkCatalog::Default().Find(models::FrameworkCatalog::kDefault);
}

// training.elementwise: the profile's (fused for every shipped stack) unless
// set; eager is echoed and makes a Llama step slower (more HBM traffic and
// launches); an unknown value names the field.
TEST(ResolveTest, ElementwiseKernelsDefaultToFusedAndEagerIsSlower) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "llama2-7b" seq_length: 4096 }
    training { framework: "pytorch-fsdp2" micro_batch_size: 1 global_batch_size: 8 }
    parallelism { zero_stage: 3 }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model.elementwise, models::ElementwiseKernels::kFused);
  EXPECT_FALSE(r->echo.training().has_elementwise());
  const double fused = StepSeconds(s);

  s.mutable_training()->set_elementwise("eager");
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model.elementwise, models::ElementwiseKernels::kEager);
  EXPECT_EQ(r->echo.training().elementwise(), "eager");
  const double eager = StepSeconds(s);
  EXPECT_GT(eager, fused * 1.02);
  EXPECT_LT(eager, fused * 1.5);

  s.mutable_training()->set_elementwise("compiled");
  r = Resolve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("training.elementwise=\"compiled\" is not known"),
            std::string::npos)
      << r.status();
}

// training.framework: the default stack is echoed; a named stack supplies
// the defaults of the fields it owns, a field the scenario sets wins, and a
// parallel feature the stack lacks is refused naming the setting.
TEST(ResolveTest, FrameworkProfileSuppliesDefaultsAndRefusesMissingFeatures) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 16 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 8 pipeline_model_parallel_size: 2 }
  )pb");
  absl::StatusOr<ResolvedScenario> core = Resolve(s);
  ASSERT_TRUE(core.ok()) << core.status();
  EXPECT_EQ(core->echo.training().framework(), "megatron-core");
  EXPECT_EQ(core->pipeline_p2p_host_us, 0);
  EXPECT_EQ(core->model.attention_backend, models::AttentionBackend::kFlash);

  s.mutable_training()->set_framework("megatron-deepspeed");
  absl::StatusOr<ResolvedScenario> ds = Resolve(s);
  ASSERT_TRUE(ds.ok()) << ds.status();
  const models::FrameworkProfile& deepspeed =
      **models::FrameworkCatalog::Default().Find("megatron-deepspeed");
  EXPECT_EQ(ds->pipeline_p2p_host_us, deepspeed.pipeline_p2p_host_us.value);
  EXPECT_EQ(ds->model.attention_backend, models::AttentionBackend::kUnfused);
  EXPECT_EQ(ds->echo.training().framework(), "megatron-deepspeed");
  // DeepSpeed's blocking pipeline sends make the same strategy slower.
  EXPECT_GT(StepSeconds(s), [&] {
    config::Scenario t = s;
    t.mutable_training()->set_pipeline_p2p_host_us(0);
    return StepSeconds(t);
  }());

  s.mutable_training()->set_host_overhead_us_per_op(5);
  s.mutable_training()->set_attention("flash");
  ds = Resolve(s);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ(ds->host_overhead_us_per_op, 5);
  EXPECT_EQ(ds->model.attention_backend, models::AttentionBackend::kFlash);

  s.mutable_training()->set_framework("pytorch-fsdp");
  std::string message(Resolve(s).status().message());
  EXPECT_NE(message.find("parallelism.tensor_model_parallel_size=8: training.framework="
                         "pytorch-fsdp"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("has no tensor_parallel"), std::string::npos) << message;
  s.mutable_parallelism()->set_tensor_model_parallel_size(1);
  s.mutable_parallelism()->set_pipeline_model_parallel_size(1);
  s.mutable_parallelism()->set_zero_stage(3);
  s.mutable_training()->set_precision("bf16");
  EXPECT_TRUE(Resolve(s).ok()) << Resolve(s).status();
  // FSDP reduces gradients in fp32 (the profile's value, echoed under ZeRO-3);
  // a scenario may set 2 or 4 bytes, anything else names the field.
  EXPECT_EQ(Resolve(s)->grad_reduce_bytes, 4);
  EXPECT_EQ(Resolve(s)->echo.training().grad_reduce_bytes(), 4);
  s.mutable_training()->set_grad_reduce_bytes(2);
  EXPECT_EQ(Resolve(s)->grad_reduce_bytes, 2);
  s.mutable_training()->set_grad_reduce_bytes(3);
  EXPECT_NE(std::string(Resolve(s).status().message()).find("training.grad_reduce_bytes=3"),
            std::string::npos);
  s.mutable_training()->clear_grad_reduce_bytes();
  s.mutable_parallelism()->set_tp_comm_overlap(true);
  message = std::string(Resolve(s).status().message());
  EXPECT_NE(message.find("sequence_parallel"), std::string::npos) << message;

  s.mutable_training()->set_framework("tensorflow");
  message = std::string(Resolve(s).status().message());
  EXPECT_NE(message.find("training.framework='tensorflow' is not known"), std::string::npos);
}

// training.framework_attention_factor: the default stack's value, echoed; a value
// outside (0, 1] names the field; on H100 (fitted attention) a lower factor
// makes the step slower, on A100 (spec-fallback attention) it changes nothing.
TEST(ResolveTest, FrameworkAttentionFactorDefaultsToTheFitAndActsOnCalibratedGpus) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "llama2-7b" seq_length: 16384 }
    parallelism { tensor_model_parallel_size: 8 }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->framework_attention_factor, DefaultStack().attention_factor.value);
  EXPECT_EQ(r->echo.training().framework_attention_factor(), DefaultStack().attention_factor.value);

  for (double bad : {0.0, -1.0, 1.5}) {
    s.mutable_training()->set_framework_attention_factor(bad);
    const absl::Status st = Resolve(s).status();
    EXPECT_NE(st.message().find("training.framework_attention_factor="), std::string::npos) << st;
    EXPECT_NE(st.message().find("(0, 1]"), std::string::npos) << st;
  }

  auto step_s = [&](const char* gpu, double factor) {
    config::Scenario t = s;
    t.mutable_cluster()->set_gpu(gpu);
    t.mutable_training()->set_framework_attention_factor(factor);
    return StepSeconds(t);
  };
  EXPECT_GT(step_s("h100-sxm5-80gb", 0.5), step_s("h100-sxm5-80gb", 1.0));
  EXPECT_EQ(step_s("a100-sxm4-80gb", 0.5), step_s("a100-sxm4-80gb", 1.0));
}

// training.framework_gemm_factor: the default stack's value, echoed; outside (0, 1]
// names the field; a lower factor makes a GEMM-bound step slower on any GPU.
TEST(ResolveTest, FrameworkGemmFactorDefaultsToTheFitAndSlowsGemms) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 8 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 8 }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->framework_gemm_factor, DefaultStack().gemm_factor.value);
  EXPECT_EQ(r->echo.training().framework_gemm_factor(), DefaultStack().gemm_factor.value);
  for (double bad : {0.0, -0.5, 1.01}) {
    s.mutable_training()->set_framework_gemm_factor(bad);
    const absl::Status st = Resolve(s).status();
    EXPECT_NE(st.message().find("training.framework_gemm_factor="), std::string::npos) << st;
  }
  auto step_s = [&](double factor) {
    config::Scenario t = s;
    t.mutable_training()->set_framework_gemm_factor(factor);
    return StepSeconds(t);
  };
  EXPECT_GT(step_s(0.8), 1.1 * step_s(1.0));
}

}  // namespace
}  // namespace clustersim::scenarios

namespace clustersim::scenarios {
namespace {

// The MoE all-to-all overlap is Megatron-Core's (combined 1F1B): on
// megatron-core it resolves; a stack without it names the field and the
// stacks that have it.
TEST(ResolveTest, MoeAllToAllOverlapIsMegatronCoreOnly) {
  config::Scenario s = resolve_testing::Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "mixtral-8x7b" seq_length: 4096 }
    parallelism { expert_model_parallel_size: 8 overlap_moe_expert_parallel_comm: true }
    training { micro_batch_size: 1 global_batch_size: 16 }
  )pb");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  s.mutable_training()->set_framework("pytorch-fsdp2");
  s.mutable_parallelism()->set_zero_stage(3);
  const std::string message(Resolve(s).status().message());
  EXPECT_NE(message.find("parallelism.overlap_moe_expert_parallel_comm=true"), std::string::npos)
      << message;
  EXPECT_NE(message.find("megatron-core"), std::string::npos) << message;
}

}  // namespace
}  // namespace clustersim::scenarios
