// Context parallelism (ring attention) and FP8 steps, end to end through the
// step builder and the engine.
#include <ostream>
#include <string>

#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"
#include "sim/engine.h"
#include "strategies/step_builder.h"
#include "strategies/step_stats.h"

namespace clustersim::strategies {
namespace {

// Every transfer costs `latency` plus its bytes at `gbs` GB/s, whatever the
// group; a send/recv from GPU `slow_from` (if any) takes twice as long.
class UniformNetwork : public topology::NetworkModel {
 public:
  UniformNetwork(double gbs, sim::Duration latency, int slow_from = -1)
      : gbs_(gbs), latency_(latency), slow_from_(slow_from) {}
  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override {
    topology::CollectiveEstimate e;
    e.time = latency_ + sim::TransferTime(r.bytes, sim::Bandwidth::GigabytesPerSecond(gbs_));
    if (r.op == topology::Collective::kSendRecv && r.gpus.front() == slow_from_) {
      e.time = e.time + e.time;
    }
    e.algorithm = topology::Algorithm::kRing;
    return e;
  }

 private:
  double gbs_;
  sim::Duration latency_;
  int slow_from_;
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

// Build options beyond the data- and tensor-parallel folds.
struct Extra {
  bool fold_cp = false;
  bool merge = false;
  bool task_infos = true;
};

StepRun Simulate(const models::TransformerConfig& model, ParallelConfig p, int world,
             const topology::NetworkModel& net, const std::string& gpu_name = "a100-sxm4-80gb",
             bool fold = true, Extra extra = {}) {
  EXPECT_TRUE(ValidateParallelConfig(model, world, &p).ok());
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find(gpu_name);
  const models::KernelModel kernels(*gpu);
  StepInputs in{.model = &model, .parallel = &p, .kernels = &kernels, .network = &net};
  in.mode.fold.data_parallel = fold;
  in.mode.fold.tensor_parallel = fold;
  in.mode.fold.context_parallel = extra.fold_cp;
  in.mode.merge_compute_chains = extra.merge;
  in.mode.record_task_infos = extra.task_infos;
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

// Every figure StepStats measures is the same in both runs.
void ExpectSameMeasures(const StepStats::Summary& a, const StepStats::Summary& b) {
  EXPECT_EQ(a.step_time, b.step_time);
  EXPECT_EQ(a.compute, b.compute);
  EXPECT_EQ(a.bubble, b.bubble);
  EXPECT_EQ(a.exposed_comm, b.exposed_comm);
  EXPECT_EQ(a.exposed_tp, b.exposed_tp);
  EXPECT_EQ(a.exposed_dp, b.exposed_dp);
  EXPECT_EQ(a.exposed_pp, b.exposed_pp);
  EXPECT_EQ(a.exposed_cp, b.exposed_cp);
  EXPECT_EQ(a.exposed_ep, b.exposed_ep);
  EXPECT_EQ(a.critical_gpu, b.critical_gpu);
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
  // 8 micro-batches: the once-per-step FP8 weight cast (4 B per parameter) is
  // amortised as in training; at one micro-batch of 2,048 tokens it alone
  // costs about 15% of the FP8 GEMM time.
  p.global_batch_size = 8;
  const StepRun bf16 = Simulate(model, p, 1, net, "h100-sxm5-80gb");
  p.precision = models::Dtype::kFp8;
  const StepRun fp8 = Simulate(model, p, 1, net, "h100-sxm5-80gb");
  EXPECT_LT(fp8.summary.step_time.ToSeconds(), 0.8 * bf16.summary.step_time.ToSeconds());
  // But not twice as fast: attention, norms, casts and the LM head stay 16-bit.
  EXPECT_GT(fp8.summary.step_time.ToSeconds(), 0.5 * bf16.summary.step_time.ToSeconds());
  EXPECT_GT(Count(fp8.plan, "fp8_cast_fwd"), 0);
  EXPECT_EQ(Count(bf16.plan, "fp8_cast_fwd"), 0);
  // The FP8 weight cast runs once per step (not per micro-batch) on each GPU,
  // over the weights of the layers it holds: 4 B per parameter.
  EXPECT_EQ(Count(fp8.plan, "fp8_weight_cast"), 1);
  EXPECT_EQ(Count(bf16.plan, "fp8_weight_cast"), 0);
  const models::ParameterCounts pc = models::CountParameters(model);
  for (const models::Op& op : fp8.plan.step_ops) {
    if (op.name == "fp8_weight_cast") {
      EXPECT_EQ(op.bytes.count(), static_cast<int64_t>(model.num_layers * pc.per_layer * 4));
    }
  }
}

// Folding the context-parallel ranks of a ring (one simulated per ring) gives
// the unfolded step's numbers when every ring hop costs the same; tensor and
// data parallelism stay unfolded so that only the cp fold is measured.
TEST(ContextParallelTest, ContextFoldIsExactOnASymmetricRing) {
  // dp 2, 4 micro-batches.
  const ParallelConfig p{.tensor_parallel = 2, .pipeline_parallel = 2, .context_parallel = 4,
                         .sequence_parallel = true, .distributed_optimizer = true,
                         .overlap_grad_reduce = true, .global_batch_size = 8};
  const UniformNetwork net(20, sim::Microseconds(5));
  const StepRun full = Simulate(Model(4096), p, 32, net, "a100-sxm4-80gb", false);
  const StepRun folded = Simulate(Model(4096), p, 32, net, "a100-sxm4-80gb", false, {.fold_cp = true});
  EXPECT_TRUE(folded.plan.folded_context_parallel);
  EXPECT_EQ(folded.plan.simulated_gpus.size(), full.plan.simulated_gpus.size() / 4);
  EXPECT_GT(full.summary.exposed_cp, sim::Duration::Zero());  // the ring is measured
  ExpectSameMeasures(folded.summary, full.summary);
}

// One slow ring hop (GPU 2 -> GPU 4, cp rank 1 -> 2) makes the ranks differ:
// the fold would be wrong, so the builder simulates every cp rank.
TEST(ContextParallelTest, ContextFoldFallsBackWhenOneHopIsSlower) {
  const ParallelConfig p{.tensor_parallel = 2, .context_parallel = 4, .sequence_parallel = true,
                         .global_batch_size = 2};  // dp 2
  const UniformNetwork net(20, sim::Microseconds(5), /*slow_from=*/2);
  const StepRun full = Simulate(Model(4096), p, 16, net, "a100-sxm4-80gb", false);
  const StepRun folded = Simulate(Model(4096), p, 16, net, "a100-sxm4-80gb", false, {.fold_cp = true});
  EXPECT_FALSE(folded.plan.folded_context_parallel);
  EXPECT_EQ(folded.plan.simulated_gpus.size(), full.plan.simulated_gpus.size());
  EXPECT_EQ(folded.summary.step_time, full.summary.step_time);
  // Folding regardless would have timed the fast hops only.
  const UniformNetwork fast(20, sim::Microseconds(5));
  EXPECT_LT(Simulate(Model(4096), p, 16, fast, "a100-sxm4-80gb", false, {.fold_cp = true})
                .summary.step_time,
            full.summary.step_time);
}

// Merging runs of compute ops leaves every measured figure as it was, with
// fewer tasks; here with pipeline, context and data parallelism together.
TEST(ContextParallelTest, MergedComputeChainsMeasureTheSame) {
  ParallelConfig p{.tensor_parallel = 2, .pipeline_parallel = 2, .context_parallel = 2,
                   .virtual_pipeline = 2, .sequence_parallel = true, .global_batch_size = 8,
                   .recompute = models::Recompute::kSelective};
  p.schedule = Schedule::kInterleaved1F1B;
  const UniformNetwork net(20, sim::Microseconds(5));
  const StepRun ops = Simulate(Model(4096), p, 16, net);
  const StepRun merged = Simulate(Model(4096), p, 16, net, "a100-sxm4-80gb", true, {.merge = true});
  EXPECT_LT(merged.plan.graph.NumTasks(), ops.plan.graph.NumTasks() * 9 / 10);
  ExpectSameMeasures(merged.summary, ops.summary);
}

// As the search runs (no TaskInfo, folds on): tensor-parallel collectives
// and folded context-parallel rings join the merged runs as pieces, and every
// measured figure is still the same as the op-by-op graph's.
struct MergeCase {
  const char* name;
  ParallelConfig p;
  int world;
  double gbs;  // network bandwidth: 1 GB/s makes the ring's sends outlast its steps
};

void PrintTo(const MergeCase& c, std::ostream* os) { *os << c.name; }

class MergedCollectivesTest : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergedCollectivesTest, MeasureTheSameWithFewerTasks) {
  const MergeCase& c = GetParam();
  const UniformNetwork net(c.gbs, sim::Microseconds(5));
  const StepRun ops =
      Simulate(Model(4096), c.p, c.world, net, "a100-sxm4-80gb", true, {.fold_cp = true});
  const StepRun merged = Simulate(Model(4096), c.p, c.world, net, "a100-sxm4-80gb", true,
                                  {.fold_cp = true, .merge = true, .task_infos = false});
  EXPECT_EQ(merged.plan.folded_context_parallel, ops.plan.folded_context_parallel);
  EXPECT_FALSE(merged.plan.merged_runs.empty());
  EXPECT_LT(merged.plan.graph.NumTasks(), ops.plan.graph.NumTasks() / 2);
  ExpectSameMeasures(merged.summary, ops.summary);
  EXPECT_GT(merged.summary.exposed_tp, sim::Duration::Zero());
  if (c.p.context_parallel > 1) {
    EXPECT_GT(merged.summary.exposed_cp, sim::Duration::Zero());
  }
}

ParallelConfig Config(int tp, int pp, int cp, int gbs, models::Recompute rc, Schedule schedule,
                      int vp = 1, int zero = 0) {
  ParallelConfig p{.tensor_parallel = tp, .pipeline_parallel = pp, .context_parallel = cp,
                   .virtual_pipeline = vp, .sequence_parallel = true, .global_batch_size = gbs,
                   .recompute = rc};
  p.schedule = schedule;
  p.zero_stage = zero;
  p.distributed_optimizer = zero == 0;
  p.overlap_grad_reduce = true;
  return p;
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, MergedCollectivesTest,
    ::testing::Values(
        MergeCase{"interleaved_selective_cp2",
                  Config(2, 2, 2, 8, models::Recompute::kSelective, Schedule::kInterleaved1F1B, 2),
                  16, 20},
        MergeCase{"full_recompute_cp4_slow_sends",
                  Config(2, 2, 4, 8, models::Recompute::kFull, Schedule::k1F1B), 32, 1},
        MergeCase{"zero3_cp2", Config(2, 1, 2, 8, models::Recompute::kNone, Schedule::k1F1B, 1, 3),
                  16, 20},
        MergeCase{"zero_bubble_tp4", Config(4, 2, 1, 8, models::Recompute::kNone, Schedule::kZeroBubbleH1),
                  16, 20},
        MergeCase{"no_sequence_parallel_allreduce",
                  [] {
                    ParallelConfig p = Config(4, 2, 2, 8, models::Recompute::kNone, Schedule::k1F1B);
                    p.sequence_parallel = false;
                    return p;
                  }(),
                  32, 20}),
    [](const ::testing::TestParamInfo<MergeCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace clustersim::strategies
