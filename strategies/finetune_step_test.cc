// LoRA / QLoRA steps (models/finetune_ops.h) through the step builder: what
// the frozen base saves, what the adapters and QLoRA's dequantisation cost,
// and what data parallelism reduces.
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/finetune_ops.h"
#include "models/gpu_catalog.h"
#include "sim/engine.h"
#include "strategies/step_builder.h"

namespace clustersim::strategies {
namespace {

// Every collective costs 10 us plus its bytes at 100 GB/s.
class FixedNetwork : public topology::NetworkModel {
 public:
  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override {
    topology::CollectiveEstimate e;
    e.time = sim::Microseconds(10) +
             sim::TransferTime(r.bytes, sim::Bandwidth::GigabytesPerSecond(100));
    e.algorithm = topology::Algorithm::kRing;
    return e;
  }
};

models::TransformerConfig SmallLlama() {
  models::TransformerConfig m;
  m.name = "small-llama";
  m.num_layers = 4;
  m.hidden_size = 2048;
  m.ffn_hidden_size = 5632;
  m.num_attention_heads = 16;
  m.num_query_groups = 16;
  m.seq_length = 2048;
  m.vocab_size = 32000;
  m.activation = models::Activation::kSwiglu;
  return m;
}

models::FinetuneSpec Spec(const char* method) {
  absl::StatusOr<models::FinetuneSpec> f = models::ParseFinetune(method, 0, {});
  EXPECT_TRUE(f.ok()) << f.status();
  return *f;
}

// One step of SmallLlama on `world` A100s (data parallelism folded), simulated.
struct StepRun {
  StepPlan plan;
  sim::Duration step;  // the simulated makespan
};

StepRun Simulate(const models::FinetuneSpec& f, ParallelConfig p, int world) {
  const models::TransformerConfig model = SmallLlama();
  EXPECT_TRUE(ValidateParallelConfig(model, world, &p).ok());
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  const FixedNetwork net;
  StepInputs in;
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.finetune = f;
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  sim::Simulator simulator;
  sim::Engine engine(plan->graph, simulator);
  EXPECT_TRUE(engine.Run().ok());
  return StepRun{*std::move(plan), engine.Makespan().SinceStart()};
}

ParallelConfig DataParallel(int dp) {
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 2 * dp;
  p.recompute = models::Recompute::kFull;
  return p;
}

double Bytes(const StepPlan& plan, absl::string_view prefix) {
  double b = 0;
  for (const models::Op& op : plan.step_ops) {
    if (absl::StartsWith(op.name, prefix)) b += op.comm_bytes.count();
  }
  return b;
}

TEST(FinetuneStepTest, LoraFasterThanFullAndQloraSlowerThanLora) {
  const StepRun full = Simulate(Spec("full"), DataParallel(1), 1);
  const StepRun lora = Simulate(Spec("lora"), DataParallel(1), 1);
  const StepRun qlora = Simulate(Spec("qlora"), DataParallel(1), 1);
  EXPECT_LT(lora.step, full.step);
  EXPECT_GT(qlora.step, lora.step);
  std::printf("full %.2f ms, lora %.2f ms, qlora %.2f ms\n", full.step.ToSeconds() * 1e3,
              lora.step.ToSeconds() * 1e3, qlora.step.ToSeconds() * 1e3);
}

TEST(FinetuneStepTest, DataParallelReducesOnlyTheAdapterGradients) {
  const models::TransformerConfig model = SmallLlama();
  const models::FinetuneSpec f = Spec("lora");
  const StepRun lora = Simulate(f, DataParallel(2), 2);
  const double adapter_bytes =
      models::AdapterParameters(model, f) * models::kAdapterGradientBytes;
  EXPECT_GT(adapter_bytes, 0);
  EXPECT_DOUBLE_EQ(Bytes(lora.plan, "dp_grad_"), adapter_bytes);
  // Full training reduces every parameter's fp32 gradient: far more.
  const StepRun full = Simulate(Spec("full"), DataParallel(2), 2);
  EXPECT_GT(Bytes(full.plan, "dp_grad_"), 20 * adapter_bytes);
}

TEST(FinetuneStepTest, DistributedOptimizerGathersOnlyAdapters) {
  const models::TransformerConfig model = SmallLlama();
  const models::FinetuneSpec f = Spec("qlora");
  ParallelConfig p = DataParallel(2);
  p.distributed_optimizer = true;
  const StepRun r = Simulate(f, p, 2);
  EXPECT_DOUBLE_EQ(Bytes(r.plan, "dp_grad_reduce_scatter"),
                   models::AdapterParameters(model, f) * models::kAdapterGradientBytes);
  EXPECT_DOUBLE_EQ(Bytes(r.plan, "dp_param_allgather"),
                   models::AdapterParameters(model, f) * 2);
}

TEST(FinetuneStepTest, OptimizerStepsOnlyTheAdapters) {
  const models::TransformerConfig model = SmallLlama();
  const models::FinetuneSpec f = Spec("lora");
  const StepRun r = Simulate(f, DataParallel(1), 1);
  double bytes = 0;
  for (const models::Op& op : r.plan.step_ops) {
    if (op.name == "optimizer_step") bytes += op.bytes.count();
  }
  EXPECT_NEAR(bytes, models::AdapterParameters(model, f) * models::kAdapterOptimizerStepBytes, 8);
}

}  // namespace
}  // namespace clustersim::strategies
