// Mixture-of-experts steps on a real topology (two DGX H100 nodes): the
// all-to-all's cost against the alpha-beta formula, the measured exposed EP
// time, and tensor-parallel ranks sending only their sequence shard.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/check.h"
#include "strategies/expert_parallel_test_util.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"
#include "topology/collective_calibration.h"

namespace clustersim::strategies {
namespace {

topology::Cluster DgxH100(int nodes) {
  topology::ClusterSpec spec;
  spec.node_preset = "dgx-h100";
  spec.num_nodes = nodes;
  absl::StatusOr<topology::Cluster> c = topology::BuildCluster(spec);
  SIM_CHECK(c.ok()) << c.status();
  return *std::move(c);
}

// An all-to-all where each rank sends `bytes` (its own share included) moves
// bytes·(n-1)/n off every GPU: on the alpha-beta tier its time is that volume
// at the bottleneck link's line rate over the link's calibrated efficiency,
// plus NCCL's base latency and (n-1) step latencies.
TEST(ExpertParallelStepTest, AllToAllCostFollowsTheAlphaBetaFormula) {
  const topology::Cluster cluster = DgxH100(2);
  const topology::AnalyticNetwork net(cluster);
  const topology::CollectiveCalibration& cal = topology::DefaultCollectiveCalibration();
  const sim::Bytes bytes = sim::MiB(64);
  struct Case {
    std::vector<int> gpus;
    double line_rate_gbs;  // per GPU, bottleneck
    topology::LinkKind kind;
  };
  // tp 8, ep 2: one GPU per node, over InfiniBand NDR (50 GB/s per GPU);
  // tp 2, ep 4: four GPUs of one node, over NVLink4 (450 GB/s per GPU).
  for (const Case& c : {Case{{0, 8}, 50, topology::LinkKind::kInfiniband},
                        Case{{0, 2, 4, 6}, 450, topology::LinkKind::kNvlink}}) {
    absl::StatusOr<topology::CollectiveEstimate> e =
        net.Estimate({topology::Collective::kAllToAll, c.gpus, bytes});
    ASSERT_TRUE(e.ok()) << e.status();
    const double n = c.gpus.size();
    const topology::LinkCalibration& link = cal.ForLink(c.kind);
    const double volume = bytes.count() * (n - 1) / n;
    // 64 MiB runs NCCL's Simple protocol (full bandwidth, its ring latencies).
    const topology::ProtocolCalibration& simple = cal.ForProtocol(topology::Protocol::kSimple);
    const double expected = cal.call_overhead.ToSeconds() + simple.ring_base.ToSeconds() +
                            (n - 1) * simple.RingHop(c.kind).ToSeconds() +
                            volume / (c.line_rate_gbs * 1e9 * link.efficiency);
    EXPECT_NEAR(e->time.ToSeconds() / expected, 1.0, 0.05) << n << " ranks";
  }
}

// On a real cluster (16 H100 in 2 nodes, ep groups inside a node) the
// measured exposed EP time is the all-to-alls' network estimates, summed.
TEST(ExpertParallelStepTest, MeasuredEpTimeIsTheNetworkEstimates) {
  const topology::Cluster cluster = DgxH100(2);
  const topology::AnalyticNetwork net(cluster);
  StepRun r = Step(Sixteen(4), 16, net);
  const std::vector<const TaskInfo*> a2a = Named(r.plan, "ep_alltoall");
  ASSERT_FALSE(a2a.empty());
  absl::StatusOr<topology::CollectiveEstimate> one =
      net.Estimate({topology::Collective::kAllToAll, {0, 2, 4, 6}, a2a[0]->op->comm_bytes});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(r.summary.exposed_ep, one->time * 16);
}

// Megatron-core's all-to-all dispatcher with tp > 1: each TP rank sends only
// its own sequence shard (k·s/tp rows of h), then all-gathers the received
// rows over the tensor group. 16 H100 in 2 nodes, pp 2, ep 4 inside a node,
// global batch 8: tp 1 (dp 8, 1 micro-batch) against tp 2 (dp 4, 2).
TEST(ExpertParallelStepTest, TensorParallelRanksSendOnlyTheirSequenceShard) {
  const topology::Cluster cluster = DgxH100(2);
  const topology::AnalyticNetwork net(cluster);
  ParallelConfig tp1 = Sixteen(4);
  tp1.tensor_parallel = 1;
  tp1.sequence_parallel = false;
  const StepRun one = Step(tp1, 16, net);
  const StepRun two = Step(Sixteen(4), 16, net);
  // 2 choices x 1024 tokens x h 1024 x 2 bytes = 4 MiB per rank at tp 1;
  // half at tp 2.
  const std::vector<const TaskInfo*> a2a1 = Named(one.plan, "ep_alltoall_dispatch");
  const std::vector<const TaskInfo*> a2a2 = Named(two.plan, "ep_alltoall_dispatch");
  ASSERT_FALSE(a2a1.empty());
  ASSERT_FALSE(a2a2.empty());
  EXPECT_EQ(a2a1[0]->op->comm_bytes, sim::MiB(4));
  EXPECT_EQ(a2a2[0]->op->comm_bytes, sim::MiB(2));
  // The tensor-group all-gather and reduce-scatter around the expert GEMMs run
  // on the TP lane over the 2 TP ranks, gathering 2 MiB x tp.
  for (const char* name : {"tp_allgather_moe_dispatch", "tp_reducescatter_moe_combine",
                           "tp_allgather_moe_combine_bwd", "tp_reducescatter_moe_dispatch_bwd"}) {
    const std::vector<const TaskInfo*> tp = Named(two.plan, name);
    ASSERT_FALSE(tp.empty()) << name;
    EXPECT_EQ(tp[0]->group_size, 2) << name;
    EXPECT_EQ(tp[0]->op->group, models::CommGroup::kTensor) << name;
    EXPECT_EQ(tp[0]->op->comm_bytes, sim::MiB(4)) << name;
  }
  EXPECT_TRUE(Named(one.plan, "tp_").empty());
  // Exposed EP: the critical GPU's all-to-alls (2 layers x micro-batches x 4),
  // each at its own estimate: same total bytes at tp 2, in twice the calls.
  absl::StatusOr<topology::CollectiveEstimate> e1 =
      net.Estimate({topology::Collective::kAllToAll, {0, 1, 2, 3}, sim::MiB(4)});
  absl::StatusOr<topology::CollectiveEstimate> e2 =
      net.Estimate({topology::Collective::kAllToAll, {0, 2, 4, 6}, sim::MiB(2)});
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_EQ(one.summary.exposed_ep, e1->time * 8);
  EXPECT_EQ(two.summary.exposed_ep, e2->time * 16);
  EXPECT_LT(e2->time, e1->time);
  EXPECT_GT(two.summary.exposed_tp, sim::Duration::Zero());
  std::printf("tp 1: step %.3f ms (compute %.3f, ep %.3f ms); tp 2: step %.3f ms (compute %.3f, "
              "ep %.3f, tp %.3f ms)\n",
              1e3 * one.summary.step_time.ToSeconds(), 1e3 * one.summary.compute.ToSeconds(),
              1e3 * one.summary.exposed_ep.ToSeconds(), 1e3 * two.summary.step_time.ToSeconds(),
              1e3 * two.summary.compute.ToSeconds(), 1e3 * two.summary.exposed_ep.ToSeconds(),
              1e3 * two.summary.exposed_tp.ToSeconds());
  // Sane step: each GPU does about the same work (half a micro-batch's
  // per-rank work, twice the micro-batches), so compute and step time stay
  // within 1.5x of each other.
  const double compute_ratio = two.summary.compute.ToSeconds() / one.summary.compute.ToSeconds();
  const double step_ratio = two.summary.step_time.ToSeconds() / one.summary.step_time.ToSeconds();
  EXPECT_GT(compute_ratio, 1 / 1.5);
  EXPECT_LT(compute_ratio, 1.5);
  EXPECT_GT(step_ratio, 1 / 1.5);
  EXPECT_LT(step_ratio, 1.5);
}

}  // namespace
}  // namespace clustersim::strategies
