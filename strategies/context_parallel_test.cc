// Context parallelism (ring attention) and FP8 steps, end to end through the
// step builder and the engine.
#include <string>

#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"
#include "sim/engine.h"
#include "strategies/step_builder.h"
#include "strategies/step_stats.h"

namespace clustersim::strategies {
namespace {

// Every transfer costs `latency` plus its bytes at `gbs` GB/s, whatever the group.
class UniformNetwork : public topology::NetworkModel {
 public:
  UniformNetwork(double gbs, sim::Duration latency) : gbs_(gbs), latency_(latency) {}
  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override {
    topology::CollectiveEstimate e;
    e.time = latency_ + sim::TransferTime(r.bytes, sim::Bandwidth::GigabytesPerSecond(gbs_));
    e.algorithm = topology::Algorithm::kRing;
    return e;
  }

 private:
  double gbs_;
  sim::Duration latency_;
};

// GPT-3 1.3B (h 2048, 16 heads), 4 layers, `seq` tokens.
models::TransformerConfig Model(int seq) {
  models::TransformerConfig m = models::ModelCatalog::Default().Find("gpt3-1.3b").value();
  m.num_layers = 4;
  m.seq_length = seq;
  return m;
}

struct StepRun {
  StepPlan plan;
  StepStats::Summary summary;
};

StepRun Simulate(const models::TransformerConfig& model, ParallelConfig p, int world,
             const topology::NetworkModel& net, const std::string& gpu_name = "a100-sxm4-80gb",
             bool fold = true) {
  EXPECT_TRUE(ValidateParallelConfig(model, world, &p).ok());
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find(gpu_name);
  const models::KernelModel kernels(*gpu);
  StepInputs in{.model = &model, .parallel = &p, .kernels = &kernels, .network = &net};
  in.fold_data_parallel = fold;
  in.fold_tensor_parallel = fold;
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  StepRun r{*std::move(plan), {}};
  sim::Simulator simulator;
  sim::Engine engine(r.plan.graph, simulator);
  StepStats stats(r.plan);
  engine.AddObserver(&stats);
  EXPECT_TRUE(engine.Run().ok());
  r.summary = stats.Summarize(engine.Makespan());
  return r;
}

int Count(const StepPlan& plan, const std::string& name) {
  int n = 0;
  for (const TaskInfo& info : plan.infos) n += info.op != nullptr && info.op->name == name;
  return n;
}

TEST(ContextParallelTest, RingHasCpStepsAndSendsPerLayer) {
  const UniformNetwork fast(1000, sim::Duration::Zero());
  ParallelConfig p;
  p.context_parallel = 4;
  p.global_batch_size = 1;
  const StepRun r = Simulate(Model(4096), p, 4, fast);
  // TaskInfo tags are shared by the ranks of a step; sends have one per rank.
  // Forward: 1 diagonal + 3 half-block steps per layer; 3 K/V sends per rank.
  EXPECT_EQ(Count(r.plan, "attention_fwd_ring_diagonal"), 4);
  EXPECT_EQ(Count(r.plan, "attention_fwd_ring_step"), 4 * 3);
  EXPECT_EQ(Count(r.plan, "cp_kv_sendrecv"), 4 * 3 * 4);
  EXPECT_EQ(Count(r.plan, "cp_kv_dkv_sendrecv"), 4 * 3 * 4);
  EXPECT_EQ(Count(r.plan, "cp_dkv_sendrecv"), 4 * 4);
  // Gradients are reduced over dp x cp = 4 ranks even though dp = 1.
  bool reduced = false;
  for (const TaskInfo& info : r.plan.infos) {
    if (info.op != nullptr && info.op->name == "dp_grad_allreduce") {
      reduced = true;
      EXPECT_EQ(info.group_size, 4);
    }
  }
  EXPECT_TRUE(reduced);
}

TEST(ContextParallelTest, CpTwoHalvesTheWorkOfALongSequence) {
  const UniformNetwork fast(1000, sim::Duration::Zero());
  ParallelConfig p;
  p.global_batch_size = 1;
  const StepRun one = Simulate(Model(8192), p, 1, fast);
  p.context_parallel = 2;
  const StepRun two = Simulate(Model(8192), p, 2, fast);
  EXPECT_LT(two.summary.compute.ToSeconds(), 0.6 * one.summary.compute.ToSeconds());
  EXPECT_GT(two.summary.compute.ToSeconds(), 0.45 * one.summary.compute.ToSeconds());
  EXPECT_LT(two.summary.step_time, one.summary.step_time);
}

TEST(ContextParallelTest, ExchangeHidesOnFastLinksAndShowsOnSlowOnes) {
  ParallelConfig p;
  p.context_parallel = 2;
  p.global_batch_size = 1;
  const UniformNetwork fast(1000, sim::Duration::Zero());
  const UniformNetwork slow(1, sim::Microseconds(10));
  const StepRun f = Simulate(Model(8192), p, 2, fast);
  const StepRun s = Simulate(Model(8192), p, 2, slow);
  // Fast: only the last dK/dV hop of each backward ring shows, well under 1%.
  EXPECT_LT(f.summary.exposed_cp.ToSeconds(), 0.01 * f.summary.step_time.ToSeconds());
  EXPECT_GT(s.summary.exposed_cp, f.summary.exposed_cp * 10);
  EXPECT_GT(s.summary.step_time, f.summary.step_time);
  // The exposed ring time is part of the step: compute + exposed comm + bubble.
  EXPECT_EQ(s.summary.step_time,
            s.summary.compute + s.summary.exposed_comm + s.summary.bubble);
}

TEST(ContextParallelTest, FoldingStaysExact) {
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.context_parallel = 2;
  p.sequence_parallel = true;
  p.distributed_optimizer = true;
  p.overlap_grad_reduce = true;
  p.global_batch_size = 4;  // dp 2, 2 micro-batches
  const UniformNetwork net(50, sim::Microseconds(5));
  const StepRun folded = Simulate(Model(4096), p, 8, net, "a100-sxm4-80gb", true);
  const StepRun full = Simulate(Model(4096), p, 8, net, "a100-sxm4-80gb", false);
  EXPECT_EQ(folded.plan.simulated_gpus.size(), 2u);  // tp 0, dp 0: both cp ranks
  EXPECT_EQ(full.plan.simulated_gpus.size(), 8u);
  EXPECT_EQ(folded.summary.step_time, full.summary.step_time);
  EXPECT_EQ(folded.summary.exposed_cp, full.summary.exposed_cp);
  EXPECT_EQ(folded.summary.exposed_dp, full.summary.exposed_dp);
  EXPECT_GT(full.summary.exposed_cp, sim::Duration::Zero());
}

TEST(ContextParallelTest, PipelineBubbleIsUnaffected) {
  // Free communication: the 1F1B bubble (p-1)/(m+p-1) with cp = 2 as without.
  const UniformNetwork free_net(1e9, sim::Duration::Zero());
  models::TransformerConfig model = Model(4096);
  model.num_layers = 16;
  model.vocab_size = 1024;
  ParallelConfig p;
  p.pipeline_parallel = 4;
  p.context_parallel = 2;
  p.global_batch_size = 8;
  const StepRun r = Simulate(model, p, 8, free_net);
  const double expected = 3.0 / (8 + 3);
  EXPECT_NEAR(r.summary.bubble.ToSeconds() / r.summary.step_time.ToSeconds(), expected,
              0.15 * expected);
}

TEST(Fp8Test, FasterThanBf16OnAGemmHeavyH100Step) {
  const UniformNetwork net(1000, sim::Duration::Zero());
  models::TransformerConfig model = Model(2048);
  model.hidden_size = 8192;
  model.ffn_hidden_size = 32768;
  model.num_attention_heads = 64;
  model.num_query_groups = 64;
  ParallelConfig p;
  p.global_batch_size = 1;
  const StepRun bf16 = Simulate(model, p, 1, net, "h100-sxm5-80gb");
  p.precision = models::Dtype::kFp8;
  const StepRun fp8 = Simulate(model, p, 1, net, "h100-sxm5-80gb");
  EXPECT_LT(fp8.summary.step_time.ToSeconds(), 0.8 * bf16.summary.step_time.ToSeconds());
  // But not twice as fast: attention, norms, casts and the LM head stay 16-bit.
  EXPECT_GT(fp8.summary.step_time.ToSeconds(), 0.5 * bf16.summary.step_time.ToSeconds());
  EXPECT_GT(Count(fp8.plan, "fp8_cast_fwd"), 0);
  EXPECT_EQ(Count(bf16.plan, "fp8_cast_fwd"), 0);
}

}  // namespace
}  // namespace clustersim::strategies
