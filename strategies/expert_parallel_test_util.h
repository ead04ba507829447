// File: strategies/expert_parallel_test_util.h
//
// Shared by the expert-parallel step tests: the 16-GPU layout they vary, and a
// helper that builds and simulates a SmallMoe step (step_builder_test_util.h)
// with the folds, optimizer sharding and host overheads a test asks for.
#ifndef CLUSTERSIM_STRATEGIES_EXPERT_PARALLEL_TEST_UTIL_H_
#define CLUSTERSIM_STRATEGIES_EXPERT_PARALLEL_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "models/gpu_catalog.h"
#include "sim/check.h"
#include "sim/engine.h"
#include "strategies/step_builder.h"
#include "strategies/step_builder_test_util.h"
#include "strategies/step_stats.h"
#include "topology/network_model.h"

namespace clustersim::strategies {

// 16 GPUs: tp 2 (sequence parallel), pp 2, dp 4, ep `ep`, 2 micro-batches.
inline ParallelConfig Sixteen(int ep) {
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.sequence_parallel = true;
  p.pipeline_parallel = 2;
  p.expert_parallel = ep;
  p.micro_batch_size = 1;
  p.global_batch_size = 8;
  return p;
}

// A built and simulated step: its plan and its statistics.
struct StepRun {
  StepPlan plan;
  StepStats::Summary summary;
};

struct RunOptions {
  bool fold_dp = true;
  bool fold_tp = false;
  bool distributed_optimizer = false;
  bool overlap = false;
  int zero_stage = 0;
  sim::Duration host_per_op = sim::Duration::Zero();
  // Megatron-Core's quick-GELU GLU (a host sync before the expert activation).
  bool quick_gelu_glu = false;
};

// Builds and simulates one step of SmallMoe on `world` GPUs over `net`.
inline StepRun Step(ParallelConfig p, int world, const topology::NetworkModel& net, RunOptions o = {}) {
  models::TransformerConfig model = SmallMoe();
  model.megatron_core_modules = o.quick_gelu_glu;
  model.quick_gelu_glu = o.quick_gelu_glu;
  p.distributed_optimizer = o.distributed_optimizer;
  p.overlap_grad_reduce = o.overlap;
  p.zero_stage = o.zero_stage;
  const absl::Status valid = ValidateParallelConfig(model, world, &p);
  SIM_CHECK(valid.ok()) << valid;
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("h100-sxm5-80gb").value());
  StepInputs in{.model = &model, .parallel = &p, .kernels = &kernels, .network = &net};
  in.mode.fold.data_parallel = o.fold_dp;
  in.mode.fold.tensor_parallel = o.fold_tp;
  in.host_overhead_per_op = o.host_per_op;
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  SIM_CHECK(plan.ok()) << plan.status();
  StepRun r{*std::move(plan), {}};
  sim::Simulator simulator;
  sim::Engine engine(r.plan.graph, simulator);
  StepStats stats(r.plan);
  engine.AddObserver(&stats);
  SIM_CHECK(engine.Run().ok());
  r.summary = stats.Summarize(engine.Makespan());
  return r;
}

// The task infos of `plan` whose op name starts with `prefix`.
inline std::vector<const TaskInfo*> Named(const StepPlan& plan, const std::string& prefix) {
  std::vector<const TaskInfo*> out;
  for (const TaskInfo& info : plan.infos) {
    if (info.op->name.rfind(prefix, 0) == 0) out.push_back(&info);
  }
  return out;
}

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_EXPERT_PARALLEL_TEST_UTIL_H_
