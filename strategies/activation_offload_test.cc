// Activation offload: Transformer Engine's copy windows, the validation
// Megatron-Core applies, the host link, and the copies the step builder adds.
#include "strategies/activation_offload.h"

#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/activation_memory.h"
#include "models/gpu_catalog.h"
#include "models/memory_model.h"
#include "sim/engine.h"
#include "sim/simulator.h"
#include "strategies/memory_inputs.h"
#include "strategies/step_builder.h"
#include "strategies/step_builder_test_util.h"

namespace clustersim::strategies {
namespace {

TEST(ActivationOffloadTest, WindowsFollowTransformerEngine) {
  // L / N = 2: layer i's copy must be done after layer 2i + 1's forward.
  const std::vector<int> half = OffloadWindowEnds(80, 40);
  ASSERT_EQ(half.size(), 40u);
  EXPECT_EQ(half.front(), 1);
  EXPECT_EQ(half[1], 3);
  EXPECT_EQ(half.back(), 79);
  // 126 layers, 95 offloaded: the first 31 windows take the remainder layers.
  const std::vector<int> w = OffloadWindowEnds(126, 95);
  ASSERT_EQ(w.size(), 95u);
  EXPECT_EQ(w[0], 1);
  EXPECT_EQ(w[30], 61);
  EXPECT_EQ(w[31], 62);
  EXPECT_EQ(w.back(), 125);  // the last window closes at the last layer
  EXPECT_EQ(OffloadWindowEnds(4, 1), (std::vector<int>{3}));
}

TEST(ActivationOffloadTest, RefusesWhatMegatronCoreRefuses) {
  const models::TransformerConfig model = SmallGpt();  // 4 layers
  ParallelConfig p;
  p.cpu_offload_layers = 3;
  EXPECT_TRUE(ValidateCpuOffload(model, p).ok());
  p.cpu_offload_layers = 4;
  absl::Status s = ValidateCpuOffload(model, p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("training.cpu_offload_layers=4"), std::string::npos) << s;
  p.cpu_offload_layers = -1;
  EXPECT_FALSE(ValidateCpuOffload(model, p).ok());
  p.cpu_offload_layers = 2;
  p.pipeline_parallel = 2;
  s = ValidateCpuOffload(model, p);
  EXPECT_NE(s.message().find("pipeline_model_parallel_size=1"), std::string::npos) << s;
  p.pipeline_parallel = 1;
  p.recompute = models::Recompute::kSelective;
  s = ValidateCpuOffload(model, p);
  EXPECT_NE(s.message().find("recompute_granularity"), std::string::npos) << s;
}

struct OffloadRun {
  StepPlan plan;
  sim::Duration step;
};

// One GPU, 4 layers, two micro-batches; `offload` layers over a host link of
// `gbs` GB/s.
OffloadRun RunOffload(int offload, double gbs) {
  const models::TransformerConfig model = SmallGpt();
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 2;
  p.cpu_offload_layers = offload;
  EXPECT_TRUE(ValidateParallelConfig(model, 1, &p).ok());
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
  const models::KernelModel kernels(*gpu);
  FixedNetwork net;
  StepInputs in;
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.host_link = sim::Bandwidth::GigabytesPerSecond(gbs);
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  OffloadRun r{*std::move(plan), {}};
  sim::Simulator sim;
  sim::Engine engine(r.plan.graph, sim);
  EXPECT_TRUE(engine.Run().ok());
  r.step = engine.Makespan() - sim::Time::Zero();
  return r;
}

TEST(ActivationOffloadTest, CopiesEachOffloadedLayerOutAndBack) {
  const OffloadRun r = RunOffload(2, 1000);
  std::vector<std::pair<int, int>> d2h, h2d;  // (micro-batch, layer)
  for (sim::TaskId t = 0; t < r.plan.graph.NumTasks(); ++t) {
    const TaskInfo& info = r.plan.infos[r.plan.graph.task(t).tag];
    if (info.op == nullptr) continue;
    if (info.op->name == "offload_d2h") d2h.emplace_back(info.microbatch, info.layer);
    if (info.op->name == "reload_h2d") h2d.emplace_back(info.microbatch, info.layer);
  }
  // Layers 0 and 1 of each micro-batch, out in forward order, back in reverse.
  EXPECT_EQ(d2h, (std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  EXPECT_EQ(h2d, (std::vector<std::pair<int, int>>{{0, 1}, {0, 0}, {1, 1}, {1, 0}}));
  // Each copy moves one layer's saved activations (the memory model's bytes).
  for (const models::Op& op : r.plan.step_ops) {
    if (op.name != "offload_d2h") continue;
    ParallelConfig p;
    p.micro_batch_size = 1;
    const models::MemoryInputs m = MemoryInputsFor(SmallGpt(), p, {});
    EXPECT_NEAR(static_cast<double>(op.bytes.count()),
                models::MeanLayerActivationBytes(m.model, m.shard), 1.0);
  }
}

TEST(ActivationOffloadTest, ExposedOnlyWhenTheLinkIsSlowerThanCompute) {
  const sim::Duration none = RunOffload(0, 1000).step;
  // A fast link hides the copies under the window's compute.
  EXPECT_LT((RunOffload(3, 1000).step - none).ToSeconds(), 0.01 * none.ToSeconds());
  // A slow one makes the compute wait at each window's end and before the
  // first layer's backward.
  const sim::Duration slow = RunOffload(3, 1).step;
  EXPECT_GT(slow.ToSeconds(), 1.5 * none.ToSeconds());
  EXPECT_GT(slow, RunOffload(1, 1).step);  // more layers offloaded, more copies exposed
}

}  // namespace
}  // namespace clustersim::strategies
