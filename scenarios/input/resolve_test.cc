#include "scenarios/input/resolve.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/framework_profile.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve_cluster.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace {

config::Scenario Parse(const char* text) {
  absl::StatusOr<config::Scenario> s = ParseScenarioText(text, "test");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

const models::FrameworkProfile& DefaultStack() {
  return **models::FrameworkCatalog::Default().Find(models::FrameworkCatalog::kDefault);
}

// Resolves and runs `s`; the simulated step time in seconds.
double StepSeconds(const config::Scenario& s) {
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  EXPECT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> res = RunScenario(*r, {});
  EXPECT_TRUE(res.ok()) << res.status();
  return res->step_time_s();
}

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

// recompute_granularity "selective+mlp_up" replays fc1 in every layer's
// backward on top of the attention core (slower than selective alone, faster
// than full) and is echoed; on routed experts it names the field.
TEST(ResolveTest, SelectiveWithMlpUpSitsBetweenSelectiveAndFull) {
  auto with = [](const char* granularity) {
    config::Scenario s = Parse(R"pb(
      cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
      model { preset: "llama2-7b" }
      parallelism { tensor_model_parallel_size: 2 }
      training { micro_batch_size: 1 global_batch_size: 8 }
    )pb");
    s.mutable_training()->set_recompute_granularity(granularity);
    return s;
  };
  const double selective = StepSeconds(with("selective"));
  const double mlp_up = StepSeconds(with("selective+mlp_up"));
  EXPECT_LT(selective, mlp_up);
  EXPECT_LT(mlp_up, StepSeconds(with("full")));
  absl::StatusOr<ResolvedScenario> r = Resolve(with("selective+mlp_up"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->parallel.recompute_mlp_up);
  EXPECT_EQ(r->parallel.recompute, models::Recompute::kSelective);
  EXPECT_EQ(r->echo.training().recompute_granularity(), "selective+mlp_up");
  config::Scenario moe = with("selective+mlp_up");
  moe.mutable_model()->set_preset("mixtral-8x7b");
  absl::StatusOr<ResolvedScenario> e = Resolve(moe);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("training.recompute_granularity"), std::string::npos)
      << e.status();
}

// An 8-GPU H100 run of `preset` (micro-batch 1, global batch 8) under the
// given recompute granularity and modules.
config::Scenario RecomputeScenario(const std::string& preset, const std::string& granularity,
                                   const std::vector<std::string>& modules) {
  config::Scenario s = Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    training { micro_batch_size: 1 global_batch_size: 8 }
  )pb");
  s.mutable_model()->set_preset(preset);
  s.mutable_training()->set_recompute_granularity(granularity);
  for (const std::string& m : modules) s.mutable_training()->add_recompute_modules(m);
  return s;
}

// recompute_granularity "selective+op" (torchtitan's per-op policy) replays
// three of a Llama block's seven matmuls and no attention: slower than
// Megatron's selective here, faster than full; echoed; Megatron's module list
// beside it is refused naming the field.
TEST(ResolveTest, SelectiveOpIsTorchtitansPerOpPolicy) {
  auto with = [](const char* granularity) {
    return RecomputeScenario("llama3-8b", granularity, {});
  };
  const double op = StepSeconds(with("selective+op"));
  EXPECT_LT(StepSeconds(with("selective")), op);
  EXPECT_LT(op, StepSeconds(with("full")));
  absl::StatusOr<ResolvedScenario> r = Resolve(with("selective+op"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->parallel.recompute_op_sac);
  EXPECT_FALSE(r->parallel.recompute_modules.core_attn);
  EXPECT_EQ(r->echo.training().recompute_granularity(), "selective+op");
  EXPECT_EQ(r->echo.training().recompute_modules_size(), 0);
  config::Scenario modules = with("selective+op");
  modules.mutable_training()->add_recompute_modules("mlp");
  absl::StatusOr<ResolvedScenario> e = Resolve(modules);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("training.recompute_modules"), std::string::npos)
      << e.status();
}

TEST(ResolveTest, RecomputeModulesReplaceTheDefaultAndNameTheFieldWhenBad) {
  auto with = [](const std::string& granularity, std::vector<std::string> modules) {
    return RecomputeScenario("llama2-7b", granularity, modules);
  };
  absl::StatusOr<ResolvedScenario> r = Resolve(with("selective", {"layernorm", "mlp"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->parallel.recompute_modules.core_attn);
  EXPECT_TRUE(r->parallel.recompute_modules.layernorm);
  EXPECT_TRUE(r->parallel.recompute_modules.mlp);
  EXPECT_EQ(r->echo.training().recompute_modules_size(), 2);
  // Replaying the MLP costs more than no recompute.
  EXPECT_LT(StepSeconds(with("none", {})), StepSeconds(with("selective", {"layernorm", "mlp"})));
  absl::StatusOr<ResolvedScenario> def = Resolve(with("selective", {}));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_TRUE(def->parallel.recompute_modules.core_attn);
  // The echo names the modules replayed: Megatron's default, and none without
  // selective recompute.
  ASSERT_EQ(def->echo.training().recompute_modules_size(), 1);
  EXPECT_EQ(def->echo.training().recompute_modules(0), "core_attn");
  EXPECT_EQ(Resolve(with("none", {}))->echo.training().recompute_modules_size(), 0);
  for (const config::Scenario& bad :
       {with("selective", {"core_attn", "attn"}), with("none", {"core_attn"})}) {
    absl::StatusOr<ResolvedScenario> e = Resolve(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find("training.recompute_modules"), std::string::npos)
        << e.status();
  }
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

namespace clustersim::scenarios {
namespace {

TEST(ResolveTest, CustomNodeBuildsItsOwnCluster) {
  absl::StatusOr<config::Scenario> s = LoadScenarioFile(
      std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) + "/scenarios/examples/custom-cluster.textproto");
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<ResolvedScenario> r = Resolve(*s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->cluster.custom_node.has_value());
  EXPECT_EQ(r->cluster.num_nodes, 4);
  EXPECT_EQ(r->cluster.custom_node->nic_link, "roce-100g");
  EXPECT_TRUE(r->echo.cluster().has_custom_node());
}

// A GB200 job runs on NVL72 racks: one NVLink domain of 72 GPUs, the
// remainder on part of the next rack.
TEST(ResolveTest, Gb200RunsOnNvl72Racks) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "gb200-186gb" num_gpus: 128 }
    model { preset: "llama3-8b" }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cluster.node_preset, "gb200-nvl72");
  EXPECT_EQ(r->cluster.num_nodes, 2);
}

TEST(ResolveTest, CustomNodeErrorsNameTheField) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "l40s" node: "pcie-l40s-8x" custom_node { gpus_per_node: 4 } }
    model { preset: "gpt-22b" }
  )pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cluster.node and cluster.custom_node"), std::string::npos);
}

TEST(ResolveTest, Fp8NeedsAGpuWithFp8) {
  absl::StatusOr<ResolvedScenario> h100 = Resolve(Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" }
    model { preset: "llama2-7b" }
    training { precision: "fp8" }
  )pb"));
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->parallel.precision, models::Dtype::kFp8);
  absl::StatusOr<ResolvedScenario> a100 = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "llama2-7b" }
    training { precision: "fp8" }
  )pb"));
  ASSERT_FALSE(a100.ok());
  EXPECT_EQ(a100.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(a100.status().message().find(
                "training.precision: dtype fp8 is not supported by a100-sxm4-80gb"),
            std::string::npos)
      << a100.status();
  EXPECT_NE(a100.status().message().find("supported: fp32, tf32, bf16, fp16"), std::string::npos)
      << a100.status();
}

TEST(ResolveTest, ContextParallelDerivesDataParallel) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 16 }
    model { preset: "llama3-8b" }
    parallelism { tensor_model_parallel_size: 2 context_parallel_size: 4 }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.data_parallel, 2);
  EXPECT_EQ(r->echo.parallelism().context_parallel_size(), 4);
}

// Serving-only devices resolve their cluster (single-device hosts) but
// a training run on them is a clear error naming the field.
TEST(ResolveTest, ServingDevicesResolveClustersButRefuseTraining) {
  for (const char* gpu : {"apple-m2-ultra", "jetson-agx-orin-64gb", "jetson-agx-orin-32gb",
                          "xeon-platinum-8480plus"}) {
    config::ClusterConfig c;
    c.set_gpu(gpu);
    absl::StatusOr<ResolvedCluster> cluster = ResolveCluster(c);
    ASSERT_TRUE(cluster.ok()) << gpu << ": " << cluster.status();
    EXPECT_EQ(cluster->gpus_per_node, 1) << gpu;  // the preset's count, not 8
    EXPECT_EQ(cluster->num_gpus, 1) << gpu;

    config::Scenario s = Parse(R"pb(model { preset: "llama2-7b" })pb");
    s.mutable_cluster()->set_gpu(gpu);
    absl::StatusOr<ResolvedScenario> r = Resolve(s);
    ASSERT_FALSE(r.ok()) << gpu;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("cluster.gpu: "), absl::string_view::npos);
    EXPECT_NE(r.status().message().find("training is modelled on discrete GPUs only"),
              absl::string_view::npos)
        << r.status();
  }
}

TEST(ResolveTest, SingleDeviceHostsAreTheDefaultsForPcieParts) {
  for (auto [gpu, node] : {std::pair{"apple-m2-ultra", "mac-studio-m2-ultra"},
                           std::pair{"jetson-agx-orin-32gb", "jetson-agx-orin"},
                           std::pair{"xeon-platinum-8480plus", "cpu-server-xeon-8480plus"},
                           std::pair{"rtx-3090", "workstation-rtx3090-1x"},
                           std::pair{"h100-pcie-80gb", "pcie-h100-1x"},
                           std::pair{"a100-pcie-80gb", "pcie-a100-1x"},
                           std::pair{"a10-pcie-24gb", "pcie-a10-1x"},
                           std::pair{"rtx-a6000", "workstation-rtx-a6000-1x"},
                           // Unchanged: the 8-GPU server stays the 4090's default.
                           std::pair{"rtx-4090", "pcie-rtx4090-8x"}}) {
    config::ClusterConfig c;
    c.set_gpu(gpu);
    absl::StatusOr<ResolvedCluster> cluster = ResolveCluster(c);
    ASSERT_TRUE(cluster.ok()) << gpu << ": " << cluster.status();
    EXPECT_EQ(cluster->spec.node_preset, node);
  }
  // 2x RTX 4090 over PCIe: a workstation preset with 2 GPUs per node.
  config::ClusterConfig c;
  c.set_gpu("rtx-4090");
  c.set_node("workstation-rtx4090-2x");
  absl::StatusOr<ResolvedCluster> two = ResolveCluster(c);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->gpus_per_node, 2);
  EXPECT_EQ(two->num_gpus, 2);
  EXPECT_EQ(two->spec.num_nodes, 1);
}

// A PCIe GPU trains on a single-GPU host (training still works there).
TEST(ResolveTest, TrainingOnASingleGpuHostResolves) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "h100-pcie-80gb" }
    model { preset: "llama2-7b" }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->num_gpus, 1);
  EXPECT_EQ(r->cluster.node_preset, "pcie-h100-1x");
}

}  // namespace
}  // namespace clustersim::scenarios
