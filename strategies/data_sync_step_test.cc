// A stack whose data loading synchronises the host with the GPU once per
// micro-batch (Megatron's broadcast_data; TransformerConfig::
// data_broadcast_host_sync): the host cannot run ahead into the next
// micro-batch's forward, so each forward's first launches wait for the GPU
// to finish the previous micro-batch, and the step gets longer.
#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "sim/check.h"
#include "sim/engine.h"
#include "strategies/step_builder.h"
#include "strategies/step_builder_test_util.h"
#include "strategies/step_stats.h"

namespace clustersim::strategies {
namespace {

struct StepRun {
  StepPlan plan;
  sim::Time step;
};

// SmallGpt on one GPU, 4 micro-batches of 1, the host launching each op in 70 us.
StepRun Step(bool data_sync) {
  models::TransformerConfig model = SmallGpt();
  model.data_broadcast_host_sync = data_sync;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 4;
  SIM_CHECK(ValidateParallelConfig(model, 1, &p).ok());
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  const FixedNetwork net;
  StepInputs in;
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.host_overhead_per_op = sim::Microseconds(70);
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  SIM_CHECK(plan.ok()) << plan.status();
  StepRun r{*std::move(plan), {}};
  sim::Simulator simulator;
  sim::Engine engine(r.plan.graph, simulator);
  SIM_CHECK(engine.Run().ok());
  r.step = engine.Makespan();
  return r;
}

TEST(DataSyncStepTest, EachMicroBatchAfterTheFirstWaitsForTheGpu) {
  const StepRun free = Step(false);
  const StepRun synced = Step(true);
  EXPECT_EQ(HostWaits(free.plan), 0);
  // The first micro-batch's sync finds nothing queued before it.
  EXPECT_EQ(HostWaits(synced.plan), 3);
  EXPECT_GT(synced.step, free.step);
}

}  // namespace
}  // namespace clustersim::strategies
