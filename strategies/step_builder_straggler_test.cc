// Slow GPUs in the step (StepInputs::gpu_time_scale): compute ops stretch by
// the GPU's factor, data-parallel replicas wait for the slowest at the
// gradient collectives, and folding a tensor-parallel group onto its slowest
// member gives the step of the unfolded group.
#include <vector>

#include "gtest/gtest.h"
#include "strategies/step_builder_test_util.h"

namespace clustersim::strategies {
namespace {

sim::Duration Makespan(const models::TransformerConfig& model, ParallelConfig p, int world,
                       bool fold_tp, std::vector<double> scale,
                       StepStats::Summary* summary = nullptr) {
  const FixedNetwork net;
  EXPECT_TRUE(ValidateParallelConfig(model, world, &p).ok());
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
  const models::KernelModel kernels(*gpu);
  StepInputs in;
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.mode.fold.data_parallel = false;
  in.mode.fold.tensor_parallel = fold_tp;
  in.gpu_time_scale = std::move(scale);
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  sim::Simulator sim;
  sim::Engine engine(plan->graph, sim);
  StepStats stats(*plan);
  engine.AddObserver(&stats);
  EXPECT_TRUE(engine.Run().ok());
  if (summary != nullptr) *summary = stats.Summarize(engine.Makespan());
  return engine.Makespan() - sim::Time::Zero();
}

TEST(StepBuilderStragglerTest, OneSlowReplicaAddsItsExtraComputeToTheStep) {
  // Two data-parallel replicas, no overlap of the gradient all-reduce: the
  // step is compute then the all-reduce, so a replica at half speed adds
  // exactly one more compute time (the all-reduce waits for it).
  ParallelConfig p;
  p.global_batch_size = 4;
  StepStats::Summary typical;
  const sim::Duration base = Makespan(SmallGpt(), p, 2, false, {1.0, 1.0}, &typical);
  const sim::Duration slow = Makespan(SmallGpt(), p, 2, false, {1.0, 2.0});
  EXPECT_EQ(slow - base, typical.compute);
}

TEST(StepBuilderStragglerTest, AllOnesIsTheTypicalStep) {
  ParallelConfig p;
  p.global_batch_size = 8;
  p.tensor_parallel = 2;
  EXPECT_EQ(Makespan(SmallGpt(), p, 4, false, std::vector<double>(4, 1.0)),
            Makespan(SmallGpt(), p, 4, false, {}));
}

TEST(StepBuilderStragglerTest, FoldedTensorGroupRunsAtItsSlowestMember) {
  // tp 2 x dp 2 with one slow GPU in the second group: the unfolded graph
  // (every rank, the group's collectives joining them) and the folded one
  // (rank 0 of each group at the group's slowest factor) give the same step.
  ParallelConfig p;
  p.global_batch_size = 8;
  p.tensor_parallel = 2;
  const std::vector<double> scale = {1.0, 1.0, 1.0, 1.6};
  const sim::Duration unfolded = Makespan(SmallGpt(), p, 4, false, scale);
  const sim::Duration folded = Makespan(SmallGpt(), p, 4, true, scale);
  EXPECT_EQ(folded, unfolded);
  EXPECT_GT(unfolded, Makespan(SmallGpt(), p, 4, false, {}));
}

TEST(StepBuilderStragglerTest, PipelineStageOfOneSlowGpuSlowsTheWholePipeline) {
  ParallelConfig p;
  p.global_batch_size = 8;
  p.pipeline_parallel = 2;
  const sim::Duration base = Makespan(SmallGpt(), p, 2, false, {});
  const sim::Duration slow_first = Makespan(SmallGpt(), p, 2, false, {1.5, 1.0});
  const sim::Duration slow_last = Makespan(SmallGpt(), p, 2, false, {1.0, 1.5});
  EXPECT_GT(slow_first, base);
  EXPECT_GT(slow_last, base);
  // Never more than every op 1.5x longer.
  EXPECT_LE((slow_first - base).ToSeconds(), 0.5 * base.ToSeconds() + 1e-9);
}

}  // namespace
}  // namespace clustersim::strategies
