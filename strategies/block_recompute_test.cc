// Full recompute by method (ParallelConfig::recompute_method): which layers
// the step builder replays, the step it builds, the memory timeline's
// per-layer activations, and the schedules block recompute refuses.
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "strategies/memory_inputs.h"
#include "strategies/memory_timeline.h"
#include "strategies/step_builder.h"
#include "strategies/step_builder_test_util.h"

namespace clustersim::strategies {
namespace {

// 4 layers on 2 stages: chunks {0, 1} and {2, 3}.
ParallelConfig TwoStages(models::Recompute r, models::RecomputeMethod method, int layers) {
  ParallelConfig p;
  p.pipeline_parallel = 2;
  p.micro_batch_size = 1;
  p.global_batch_size = 4;
  p.recompute = r;
  p.recompute_method = method;
  p.recompute_num_layers = layers;
  return p;
}

// The layers whose backward ran a replayed forward op.
std::set<int> ReplayedLayers(const StepPlan& plan) {
  std::set<int> layers;
  for (const TaskInfo& info : plan.infos) {
    if (info.op != nullptr && info.op->recompute && info.phase == Phase::kBackward) {
      layers.insert(info.layer);
    }
  }
  return layers;
}

TEST(BlockRecomputeTest, ReplaysTheFirstLayersOfEachChunk) {
  using models::Recompute;
  using models::RecomputeMethod;
  FixedNetwork net;
  const models::TransformerConfig model = SmallGpt();
  const SimRun block1 = Simulate(model, TwoStages(Recompute::kFull, RecomputeMethod::kBlock, 1),
                                 2, true, net);
  EXPECT_EQ(ReplayedLayers(block1.plan), (std::set<int>{0, 2}));
  // Replayed forward ops: half the layers' worth of full recompute's.
  const SimRun full = Simulate(model, TwoStages(Recompute::kFull, RecomputeMethod::kUniform, 1),
                               2, true, net);
  EXPECT_EQ(ReplayedLayers(full.plan), (std::set<int>{0, 1, 2, 3}));
  auto recompute_tasks = [](const StepPlan& plan) {
    int n = 0;
    for (const TaskInfo& info : plan.infos) n += info.op != nullptr && info.op->recompute;
    return n;
  };
  EXPECT_EQ(2 * recompute_tasks(block1.plan), recompute_tasks(full.plan));
  // A block of the whole chunk is full recompute; block sits between none and full.
  const SimRun block2 = Simulate(model, TwoStages(Recompute::kFull, RecomputeMethod::kBlock, 2),
                                 2, true, net);
  EXPECT_EQ(block2.summary.step_time, full.summary.step_time);
  EXPECT_EQ(block2.plan.graph.NumTasks(), full.plan.graph.NumTasks());
  const SimRun none = Simulate(model, TwoStages(Recompute::kNone, RecomputeMethod::kUniform, 1),
                               2, true, net);
  EXPECT_LT(none.summary.step_time, block1.summary.step_time);
  EXPECT_LT(block1.summary.step_time, full.summary.step_time);
  // Uniform groups replay every layer: the same step as full recompute.
  const SimRun uniform2 = Simulate(
      model, TwoStages(Recompute::kFull, RecomputeMethod::kUniform, 2), 2, true, net);
  EXPECT_EQ(uniform2.summary.step_time, full.summary.step_time);
}

TEST(BlockRecomputeTest, ReplaysLayerFollowsTheChunks) {
  ParallelConfig p = TwoStages(models::Recompute::kFull, models::RecomputeMethod::kBlock, 1);
  ASSERT_TRUE(ValidateParallelConfig(SmallGpt(), 2, &p).ok());
  EXPECT_EQ((std::vector<bool>{p.ReplaysLayer(0, 4), p.ReplaysLayer(1, 4), p.ReplaysLayer(2, 4),
                               p.ReplaysLayer(3, 4)}),
            (std::vector<bool>{true, false, true, false}));
  p.recompute_method = models::RecomputeMethod::kUniform;
  EXPECT_TRUE(p.ReplaysLayer(1, 4));
  p.recompute = models::Recompute::kSelective;
  EXPECT_FALSE(p.ReplaysLayer(0, 4));
}

TEST(BlockRecomputeTest, ZeroBubbleScheduleIsRefused) {
  ParallelConfig p = TwoStages(models::Recompute::kFull, models::RecomputeMethod::kBlock, 1);
  p.schedule = Schedule::kZeroBubbleH1;
  const absl::Status s = ValidateParallelConfig(SmallGpt(), 2, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("training.recompute_method"), std::string_view::npos) << s;
  p.recompute_method = models::RecomputeMethod::kUniform;
  EXPECT_TRUE(ValidateParallelConfig(SmallGpt(), 2, &p).ok());
}

// The timeline's per-layer activations: a block's replayed layers keep full
// recompute's checkpoint and the others what they keep without recompute;
// uniform groups keep one checkpoint in their first layer.
TEST(BlockRecomputeTest, TimelineSizesFollowTheMethod) {
  using models::Recompute;
  using models::RecomputeMethod;
  const models::TransformerConfig model = SmallGpt();
  auto sizes = [&](Recompute r, RecomputeMethod method, int layers) {
    ParallelConfig p = TwoStages(r, method, layers);
    EXPECT_TRUE(ValidateParallelConfig(model, 2, &p).ok());
    return ActivationSizesOf(MemoryInputsFor(model, p, {}), p);
  };
  const ActivationSizes full = sizes(Recompute::kFull, RecomputeMethod::kUniform, 1);
  const ActivationSizes none = sizes(Recompute::kNone, RecomputeMethod::kUniform, 1);
  EXPECT_TRUE(full.by_layer.empty());
  EXPECT_GT(none.per_layer, full.per_layer);
  const ActivationSizes block = sizes(Recompute::kFull, RecomputeMethod::kBlock, 1);
  EXPECT_EQ(block.by_layer, (std::vector<int64_t>{full.per_layer, none.per_layer, full.per_layer,
                                                  none.per_layer}));
  EXPECT_EQ(block.embedding, full.embedding);
  EXPECT_EQ(block.head, full.head);
  const ActivationSizes uniform = sizes(Recompute::kFull, RecomputeMethod::kUniform, 2);
  EXPECT_EQ(uniform.by_layer, (std::vector<int64_t>{full.per_layer, 0, full.per_layer, 0}));
}

}  // namespace
}  // namespace clustersim::strategies
