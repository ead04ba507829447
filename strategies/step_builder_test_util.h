// File: strategies/step_builder_test_util.h
//
// Shared by the step builder's tests: a network whose collectives cost a
// fixed formula, a small GPT, a helper that builds and simulates a step, and
// one that counts where a step's host waits for the GPU.
#ifndef CLUSTERSIM_STRATEGIES_STEP_BUILDER_TEST_UTIL_H_
#define CLUSTERSIM_STRATEGIES_STEP_BUILDER_TEST_UTIL_H_

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "sim/engine.h"
#include "strategies/step_builder.h"
#include "strategies/step_stats.h"

namespace clustersim::strategies {

// Every collective costs 10 us plus its bytes at 100 GB/s, whatever the group.
class FixedNetwork : public topology::NetworkModel {
 public:
  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override {
    ++calls;
    topology::CollectiveEstimate e;
    e.time = sim::Microseconds(10) +
             sim::TransferTime(r.bytes, sim::Bandwidth::GigabytesPerSecond(100));
    e.algorithm = topology::Algorithm::kRing;
    return e;
  }
  mutable int calls = 0;
};

inline models::TransformerConfig SmallGpt() {
  models::TransformerConfig m;
  m.name = "small";
  m.num_layers = 4;
  m.hidden_size = 1024;
  m.ffn_hidden_size = 4096;
  m.num_attention_heads = 16;
  m.num_query_groups = 16;
  m.seq_length = 1024;
  m.vocab_size = 32000;
  return m;
}

// A 4-layer MoE, by default with 8 experts, top-2: small enough for unfolded runs.
inline models::TransformerConfig SmallMoe(int experts = 8, int top_k = 2) {
  models::TransformerConfig m;
  m.name = "small-moe";
  m.num_layers = 4;
  m.hidden_size = 1024;
  m.ffn_hidden_size = 2048;
  m.num_attention_heads = 16;
  m.num_query_groups = 8;
  m.seq_length = 1024;
  m.vocab_size = 32000;
  m.activation = models::Activation::kSwiglu;
  m.num_experts = experts;
  m.moe_top_k = top_k;
  return m;
}

// Edges from a GPU task into a host launch in `plan`: the points where the
// host waits for the GPU (a host sync) before it launches more.
inline int HostWaits(const StepPlan& plan) {
  const sim::TaskGraph& g = plan.graph;
  auto name = [&](sim::TaskId t) -> const std::string& { return plan.infos[g.task(t).tag].op->name; };
  int n = 0;
  for (const auto& [before, after] : g.edges()) {
    if (name(after) == "host_launch" && name(before) != "host_launch") ++n;
  }
  return n;
}

struct SimRun {
  StepPlan plan;
  StepStats::Summary summary;
};

// `observer`, when given, sees every span too.
inline SimRun Simulate(const models::TransformerConfig& model, ParallelConfig p, int world,
                       bool fold, const FixedNetwork& net,
                       sim::Duration pipeline_p2p_host = sim::Duration::Zero(),
                       sim::SpanObserver* observer = nullptr) {
  EXPECT_TRUE(ValidateParallelConfig(model, world, &p).ok());
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
  const models::KernelModel kernels(*gpu);
  StepInputs in;
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.mode.fold.data_parallel = fold;
  in.pipeline_p2p_host = pipeline_p2p_host;
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  SimRun r{*std::move(plan), {}};
  sim::Simulator sim;
  sim::Engine engine(r.plan.graph, sim);
  StepStats stats(r.plan);
  engine.AddObserver(&stats);
  if (observer != nullptr) engine.AddObserver(observer);
  EXPECT_TRUE(engine.Run().ok());
  r.summary = stats.Summarize(engine.Makespan());
  return r;
}

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_STEP_BUILDER_TEST_UTIL_H_
