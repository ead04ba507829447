// DeepEP / HybridEP dispatch in a step (strategies/expert_dispatch.h): the
// expert all-to-alls become a rail part over the scale-out network and a
// node part over NVLink, with the bytes the routing implies.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "sim/check.h"
#include "sim/engine.h"
#include "strategies/expert_dispatch.h"
#include "strategies/step_builder.h"
#include "strategies/step_builder_test_util.h"
#include "strategies/step_stats.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::strategies {
namespace {

struct DispatchRun {
  StepPlan plan;
  sim::Duration step_time;
};

// 16 H100 in two nodes: tp 2, dp 8, ep 8, so each expert group ({0, 2, ...,
// 14}) has four ranks on each node.
DispatchRun Step(MoeDispatcher dispatcher) {
  // DeepSeek-V3's top-8: most tokens have experts on both nodes, several on each.
  const models::TransformerConfig model = SmallMoe(/*experts=*/16, /*top_k=*/8);
  topology::ClusterSpec spec;
  spec.node_preset = "dgx-h100";
  spec.num_nodes = 2;
  absl::StatusOr<topology::Cluster> cluster = topology::BuildCluster(spec);
  SIM_CHECK(cluster.ok()) << cluster.status();
  const topology::AnalyticNetwork net(*cluster);
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.sequence_parallel = true;
  p.expert_parallel = 8;
  p.global_batch_size = 8;
  p.moe_dispatcher = dispatcher;
  const absl::Status valid = ValidateParallelConfig(model, 16, &p);
  SIM_CHECK(valid.ok()) << valid;
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("h100-sxm5-80gb").value());
  StepInputs in{.model = &model, .parallel = &p, .kernels = &kernels, .network = &net};
  in.cluster = &*cluster;
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  SIM_CHECK(plan.ok()) << plan.status();
  DispatchRun r{*std::move(plan), {}};
  sim::Simulator simulator;
  sim::Engine engine(r.plan.graph, simulator);
  SIM_CHECK(engine.Run().ok());
  r.step_time = engine.Makespan() - sim::Time();
  return r;
}

// The op bytes and group sizes of the collectives named `name`.
std::vector<std::pair<int64_t, int>> Collectives(const StepPlan& plan, const std::string& name) {
  std::vector<std::pair<int64_t, int>> out;
  for (const TaskInfo& info : plan.infos) {
    if (info.is_collective && info.op->name == name) {
      out.emplace_back(info.op->comm_bytes.count(), info.group_size);
    }
  }
  return out;
}

TEST(ExpertDispatchStepTest, DeepEpSendsATokenOncePerNodeThenFansOutOverNvlink) {
  const DispatchRun plain = Step(MoeDispatcher::kAllToAll);
  const auto a2a = Collectives(plain.plan, "ep_alltoall_dispatch");
  ASSERT_FALSE(a2a.empty());
  const int64_t bytes = a2a[0].first;  // eight copies of every token
  EXPECT_EQ(a2a[0].second, 8);
  for (MoeDispatcher d : {MoeDispatcher::kDeepEp, MoeDispatcher::kHybridEp}) {
    const DispatchRun r = Step(d);
    EXPECT_TRUE(Collectives(r.plan, "ep_alltoall_dispatch").empty());
    const auto rail = Collectives(r.plan, "ep_alltoall_dispatch_internode");
    const auto node = Collectives(r.plan, "ep_alltoall_dispatch_nvlink");
    ASSERT_EQ(rail.size(), a2a.size());
    ASSERT_EQ(node.size(), a2a.size());
    // Rail: one rank per node (2); a token goes to each node holding one of
    // its eight experts (8 of 16 per node).
    EXPECT_EQ(rail[0].second, 2);
    EXPECT_NEAR(rail[0].first, bytes / 8.0 * ExpectedDistinct(16, 2, 8), 1);
    // Node: the four ranks of a node; one copy per rank holding an expert
    // (2 experts per rank).
    EXPECT_EQ(node[0].second, 4);
    EXPECT_NEAR(node[0].first, bytes / 8.0 * ExpectedDistinct(16, 8, 8), 1);
    // Off each node: half the all-to-all's bytes, against the copies of the
    // tokens that have an expert on the other node (half of the rail bytes).
    EXPECT_LT(rail[0].first / 2, bytes / 2);
    EXPECT_FALSE(Collectives(r.plan, "ep_alltoall_combine_internode").empty());
    // Fewer bytes over InfiniBand, the rest over NVLink: a faster step.
    EXPECT_LT(r.step_time, plain.step_time) << MoeDispatcherName(d);
  }
}

}  // namespace
}  // namespace clustersim::strategies
