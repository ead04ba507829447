// The test suite every network tier passes (house-style rule 22): each
// collective algorithm on a preset, through the NetworkModel interface, for the
// analytic tier and the flow-level tier (run alone), which must also agree.
#include <memory>
#include <numeric>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "sim/check.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"
#include "topology/flow_network_model.h"

namespace clustersim::topology {
namespace {

Cluster Build(const std::string& preset, int nodes) {
  ClusterSpec spec;
  spec.node_preset = preset;
  spec.num_nodes = nodes;
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  SIM_CHECK(c.ok()) << c.status();
  return *std::move(c);
}

std::vector<int> Range(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::unique_ptr<NetworkModel> MakeTier(const std::string& tier, const Cluster& c) {
  if (tier == "flow") return std::make_unique<FlowNetworkModel>(c);
  return std::make_unique<AnalyticNetwork>(c);
}

// The most a GPU can inject: the sum of its links' bandwidths, GB/s.
double InjectionBound(const Cluster& c, const std::vector<int>& gpus) {
  double bound = 0;
  for (int g : gpus) {
    double sum = 0;
    for (int e = 0; e < c.num_links(); ++e) {
      if (c.link(e).src == c.GpuVertex(g)) sum += c.link(e).bandwidth.GigabytesPerSecond();
    }
    bound = std::max(bound, sum);
  }
  return bound;
}

struct Case {
  std::string name;
  std::string preset;
  int nodes;
  Collective op;
  Algorithm algorithm;
  int num_gpus;
  Protocol protocol = Protocol::kAuto;
};

class AlgorithmSuite : public ::testing::TestWithParam<std::tuple<Case, std::string>> {};

TEST_P(AlgorithmSuite, TimeGrowsBusbwIsBoundedAndResultsAreDeterministic) {
  const Case& k = std::get<0>(GetParam());
  const Cluster cluster = Build(k.preset, k.nodes);
  const std::unique_ptr<NetworkModel> tier = MakeTier(std::get<1>(GetParam()), cluster);
  const NetworkModel& net = *tier;
  const AnalyticNetwork analytic(cluster);
  const std::vector<int> gpus = Range(k.num_gpus);
  sim::Duration previous = sim::Duration::Zero();
  for (int64_t bytes = 1 << 10; bytes <= (int64_t{1} << 32); bytes *= 8) {
    const CollectiveRequest r{k.op, gpus, sim::Bytes(bytes), k.algorithm, k.protocol};
    absl::StatusOr<CollectiveEstimate> e = net.Estimate(r);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_GT(e->time, previous) << bytes << " bytes";
    previous = e->time;
    EXPECT_NE(e->algorithm, Algorithm::kAuto);
    EXPECT_NE(e->protocol, Protocol::kAuto);
    if (k.algorithm != Algorithm::kAuto) {
      EXPECT_EQ(e->algorithm, k.algorithm);
    }
    if (k.protocol != Protocol::kAuto) {
      EXPECT_EQ(e->protocol, k.protocol);
    }
    if (e->algorithm != Algorithm::kNvls) {
      EXPECT_LE(e->busbw_gbs, InjectionBound(cluster, gpus)) << bytes << " bytes";
    }
    EXPECT_NEAR(e->busbw_gbs,
                static_cast<double>(bytes) / e->time.ToSeconds() * 1e-9 *
                    BusBandwidthFactor(k.op, k.num_gpus),
                1e-6 * e->busbw_gbs);
    absl::StatusOr<CollectiveEstimate> again = net.Estimate(r);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->time, e->time);
    // Alone on the network, every tier costs what the analytic tier says.
    absl::StatusOr<CollectiveEstimate> reference = analytic.Estimate(r);
    ASSERT_TRUE(reference.ok());
    EXPECT_EQ(e->algorithm, reference->algorithm);
    EXPECT_EQ(e->protocol, reference->protocol);
    EXPECT_NEAR(e->time.ToSeconds(), reference->time.ToSeconds(),
                1e-9 * reference->time.ToSeconds() + 10e-12)
        << bytes << " bytes";
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryAlgorithm, AlgorithmSuite,
    ::testing::Combine(::testing::Values(
        Case{"ring_all_reduce", "dgx-h100", 1, Collective::kAllReduce, Algorithm::kRing, 8},
        Case{"ring_reduce_scatter", "dgx-a100", 2, Collective::kReduceScatter, Algorithm::kRing,
             16},
        Case{"ring_all_gather", "hgx-b200", 1, Collective::kAllGather, Algorithm::kRing, 8},
        Case{"ring_all_to_all", "dgx-h100", 2, Collective::kAllToAll, Algorithm::kRing, 16},
        Case{"ring_broadcast", "pcie-rtx4090-8x", 1, Collective::kBroadcast, Algorithm::kRing, 8},
        Case{"ring_send_recv", "dgx-h100", 2, Collective::kSendRecv, Algorithm::kRing, 2},
        Case{"ring_pcie_all_reduce", "pcie-l40s-8x", 2, Collective::kAllReduce, Algorithm::kRing,
             16},
        Case{"tree_all_reduce", "dgx-a100", 4, Collective::kAllReduce, Algorithm::kTree, 32},
        Case{"nvls_all_reduce", "dgx-h100", 1, Collective::kAllReduce, Algorithm::kNvls, 8},
        Case{"hierarchical_all_reduce", "dgx-h200", 3, Collective::kAllReduce,
             Algorithm::kHierarchical, 24},
        Case{"auto_all_reduce", "hgx-b200", 2, Collective::kAllReduce, Algorithm::kAuto, 16},
        Case{"ring_all_reduce_ll", "dgx-h100", 2, Collective::kAllReduce, Algorithm::kRing, 16,
             Protocol::kLl},
        Case{"ring_all_gather_ll128", "hgx-b200", 1, Collective::kAllGather, Algorithm::kRing, 8,
             Protocol::kLl128},
        Case{"tree_all_reduce_ll", "dgx-a100", 4, Collective::kAllReduce, Algorithm::kTree, 32,
             Protocol::kLl},
        Case{"hierarchical_all_reduce_simple", "dgx-h100", 2, Collective::kAllReduce,
             Algorithm::kHierarchical, 16, Protocol::kSimple}),
                       ::testing::Values("analytic", "flow")),
    [](const auto& info) {
      return std::get<0>(info.param).name + "_" + std::get<1>(info.param);
    });

}  // namespace
}  // namespace clustersim::topology
