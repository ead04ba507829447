// FP8 steps' amax reductions (StepInputs::fp8_amax_reduction): one blocking
// all-reduce over the pipeline stage per model chunk, micro-batch and
// direction, through the step builder and the engine.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"
#include "sim/engine.h"
#include "strategies/step_builder.h"
#include "strategies/step_stats.h"

namespace clustersim::strategies {
namespace {

// Every collective costs `latency` plus its bytes at 100 GB/s; records the
// group of each all-reduce it is asked about.
class LatencyNetwork : public topology::NetworkModel {
 public:
  explicit LatencyNetwork(sim::Duration latency) : latency_(latency) {}
  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override {
    if (r.op == topology::Collective::kAllReduce) groups_.push_back(r.gpus);
    topology::CollectiveEstimate e;
    e.time = latency_ + sim::TransferTime(r.bytes, sim::Bandwidth::GigabytesPerSecond(100));
    e.algorithm = topology::Algorithm::kRing;
    return e;
  }
  mutable std::vector<std::vector<int>> groups_;

 private:
  sim::Duration latency_;
};

struct StepRun {
  StepPlan plan;
  double step_s = 0;
};

// GPT-3 1.3B cut to 4 layers, on H100s (or `gpu_name`), unfolded.
StepRun Simulate(ParallelConfig p, int world, bool amax, const LatencyNetwork& net,
                 const char* gpu_name = "h100-sxm5-80gb") {
  models::TransformerConfig model = models::ModelCatalog::Default().Find("gpt3-1.3b").value();
  model.num_layers = 4;
  EXPECT_TRUE(ValidateParallelConfig(model, world, &p).ok());
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find(gpu_name);
  const models::KernelModel kernels(*gpu);
  StepInputs in{.model = &model, .parallel = &p, .kernels = &kernels, .network = &net};
  in.fp8_amax_reduction = amax;
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  StepRun r{*std::move(plan), 0};
  sim::Simulator simulator;
  sim::Engine engine(r.plan.graph, simulator);
  EXPECT_TRUE(engine.Run().ok());
  r.step_s = engine.Makespan().ToSeconds();
  return r;
}

// Tasks tagged with op `name`, and that op's bytes (0 if none).
std::pair<int, int64_t> Find(const StepPlan& plan, const std::string& name) {
  int n = 0;
  int64_t bytes = 0;
  for (const TaskInfo& info : plan.infos) {
    if (info.op == nullptr || info.op->name != name) continue;
    ++n;
    bytes = info.op->comm_bytes.count();
    EXPECT_EQ(info.group_size, 4) << name;  // tp 2 x dp 2 of the stage
  }
  return {n, bytes};
}

ParallelConfig Interleaved(models::Dtype precision) {
  // tp 2, pp 2, 2 chunks per stage (one layer each), dp 2, 4 micro-batches.
  return ParallelConfig{.tensor_parallel = 2, .pipeline_parallel = 2, .virtual_pipeline = 2,
                        .global_batch_size = 8, .precision = precision};
}

TEST(Fp8AmaxReductionTest, OnePerChunkMicrobatchAndDirectionOverTheStage) {
  const LatencyNetwork net(sim::Microseconds(50));
  const StepRun r = Simulate(Interleaved(models::Dtype::kFp8), 8, true, net);
  // 2 stages x 2 chunks x 4 micro-batches, each a task over the stage's GPUs.
  const auto [fwd, fwd_bytes] = Find(r.plan, "fp8_amax_allreduce_fwd");
  const auto [bwd, bwd_bytes] = Find(r.plan, "fp8_amax_allreduce_bwd");
  EXPECT_EQ(fwd, 16);
  EXPECT_EQ(bwd, 16);
  // The GPU's 2 layers x 4 FP8 GEMMs (QKV, projection, FC1, FC2), 3 fp32
  // amaxes each in the forward and 2 in the backward.
  EXPECT_EQ(fwd_bytes, 2 * 4 * 3 * 4);
  EXPECT_EQ(bwd_bytes, 2 * 4 * 2 * 4);
  // The group is the stage's tp x dp ranks: GPUs 0-3 or 4-7.
  bool stage_group = false;
  for (const std::vector<int>& g : net.groups_) {
    stage_group |= g == std::vector<int>{0, 1, 2, 3} || g == std::vector<int>{4, 5, 6, 7};
  }
  EXPECT_TRUE(stage_group);
}

TEST(Fp8AmaxReductionTest, BlocksTheComputeStream) {
  // 32 all-reductions per GPU chain, each 50 us: the step grows by at least
  // the ones on one stage's chain (16 x 50 us), the bubble aside.
  const LatencyNetwork net(sim::Microseconds(50));
  const StepRun with = Simulate(Interleaved(models::Dtype::kFp8), 8, true, net);
  const StepRun without = Simulate(Interleaved(models::Dtype::kFp8), 8, false, net);
  EXPECT_GT(with.step_s - without.step_s, 16 * 50e-6);
}

TEST(Fp8AmaxReductionTest, NoneUnderBf16OffOrOverAGroupOfOne) {
  const LatencyNetwork net(sim::Microseconds(50));
  const StepRun bf16 = Simulate(Interleaved(models::Dtype::kBf16), 8, true, net);
  EXPECT_EQ(Find(bf16.plan, "fp8_amax_allreduce_fwd").first, 0);
  const StepRun off = Simulate(Interleaved(models::Dtype::kFp8), 8, false, net);
  EXPECT_EQ(Find(off.plan, "fp8_amax_allreduce_fwd").first, 0);
  // tp = dp = cp = 1: Transformer Engine skips the all-reduce.
  ParallelConfig alone{.pipeline_parallel = 2, .global_batch_size = 4,
                       .precision = models::Dtype::kFp8};
  const StepRun one = Simulate(alone, 2, true, net);
  EXPECT_EQ(Find(one.plan, "fp8_amax_allreduce_fwd").first, 0);
  EXPECT_EQ(Find(one.plan, "fp8_amax_allreduce_bwd").first, 0);
}

// Current scaling and MXFP8 keep no amax history: no autocast all-reduce.
TEST(Fp8AmaxReductionTest, OnlyUnderDelayedScaling) {
  const LatencyNetwork net(sim::Microseconds(50));
  for (models::Fp8Recipe recipe : {models::Fp8Recipe::kCurrent, models::Fp8Recipe::kMxfp8}) {
    ParallelConfig p = Interleaved(models::Dtype::kFp8);
    p.fp8_recipe = recipe;
    const StepRun r = Simulate(p, 8, true, net);
    EXPECT_EQ(Find(r.plan, "fp8_amax_allreduce_fwd").first, 0) << models::Fp8RecipeName(recipe);
    EXPECT_EQ(Find(r.plan, "fp8_amax_allreduce_bwd").first, 0) << models::Fp8RecipeName(recipe);
  }
}

// The once-per-step weight cast moves the recipe's bytes per parameter:
// current scaling 6/4, MXFP8 4.0625/4 and torchao rowwise 10/4 of delayed
// scaling's.
TEST(Fp8WeightCastTest, BytesFollowTheRecipe) {
  const LatencyNetwork net(sim::Microseconds(50));
  auto cast_bytes = [&](models::Fp8Recipe recipe) {
    ParallelConfig p = Interleaved(models::Dtype::kFp8);
    p.fp8_recipe = recipe;
    const StepRun r = Simulate(p, 8, false, net);
    int64_t bytes = 0;
    for (const TaskInfo& info : r.plan.infos) {
      if (info.op != nullptr && info.op->name == "fp8_weight_cast") bytes = info.op->bytes.count();
    }
    return static_cast<double>(bytes);
  };
  const double delayed = cast_bytes(models::Fp8Recipe::kDelayed);
  ASSERT_GT(delayed, 0);
  EXPECT_NEAR(cast_bytes(models::Fp8Recipe::kCurrent) / delayed, 1.5, 1e-6);
  EXPECT_NEAR(cast_bytes(models::Fp8Recipe::kMxfp8) / delayed, 4.0625 / 4, 1e-6);
  EXPECT_NEAR(cast_bytes(models::Fp8Recipe::kRowwise) / delayed, 10.0 / 4, 1e-6);
}

// NVFP4 (on a B200): the weights' once-per-step 2D quantize moves 5.125 B per
// parameter, 5.125/4 of delayed FP8's, and no amax all-reduce runs.
TEST(Fp8WeightCastTest, Nvfp4QuantizesTheWeightsOnceWithoutAmaxReduction) {
  const LatencyNetwork net(sim::Microseconds(50));
  auto run = [&](models::Dtype precision, models::Fp8Recipe recipe) {
    ParallelConfig p = Interleaved(precision);
    p.fp8_recipe = recipe;
    return Simulate(p, 8, true, net, "b200-sxm-180gb");
  };
  auto cast_bytes = [](const StepRun& r) {
    int64_t bytes = 0;
    for (const TaskInfo& info : r.plan.infos) {
      if (info.op != nullptr && info.op->name == "fp8_weight_cast") bytes = info.op->bytes.count();
    }
    return static_cast<double>(bytes);
  };
  const StepRun delayed = run(models::Dtype::kFp8, models::Fp8Recipe::kDelayed);
  const StepRun nvfp4 = run(models::Dtype::kFp4, models::Fp8Recipe::kNvfp4);
  ASSERT_GT(cast_bytes(delayed), 0);
  EXPECT_NEAR(cast_bytes(nvfp4) / cast_bytes(delayed), 5.125 / 4, 1e-6);
  EXPECT_EQ(Find(nvfp4.plan, "fp8_amax_allreduce_fwd").first, 0);
  EXPECT_EQ(Find(nvfp4.plan, "fp8_amax_allreduce_bwd").first, 0);
}

}  // namespace
}  // namespace clustersim::strategies
