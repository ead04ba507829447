#include "topology/analytic_network.h"

#include <numeric>
#include <string>

#include "gmock/gmock.h"
#include "sim/check.h"
#include "gtest/gtest.h"
#include "topology/cluster.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;

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
};

class AlgorithmSuite : public ::testing::TestWithParam<Case> {};

TEST_P(AlgorithmSuite, TimeGrowsBusbwIsBoundedAndResultsAreDeterministic) {
  const Case& k = GetParam();
  const Cluster cluster = Build(k.preset, k.nodes);
  AnalyticNetwork net(cluster);
  const std::vector<int> gpus = Range(k.num_gpus);
  sim::Duration previous = sim::Duration::Zero();
  for (int64_t bytes = 1 << 10; bytes <= (int64_t{1} << 32); bytes *= 8) {
    const CollectiveRequest r{k.op, gpus, sim::Bytes(bytes), k.algorithm};
    absl::StatusOr<CollectiveEstimate> e = net.Estimate(r);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_GT(e->time, previous) << bytes << " bytes";
    previous = e->time;
    EXPECT_NE(e->algorithm, Algorithm::kAuto);
    if (k.algorithm != Algorithm::kAuto) {
      EXPECT_EQ(e->algorithm, k.algorithm);
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
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryAlgorithm, AlgorithmSuite,
    ::testing::Values(
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
        Case{"auto_all_reduce", "hgx-b200", 2, Collective::kAllReduce, Algorithm::kAuto, 16}),
    [](const auto& info) { return info.param.name; });

TEST(AnalyticNetworkTest, AutoPicksLikeNccl) {
  const Cluster one = Build("dgx-h100", 1);
  AnalyticNetwork net1(one);
  EXPECT_EQ(net1.Estimate({Collective::kAllReduce, Range(8), sim::KiB(64)})->algorithm,
            Algorithm::kRing);
  EXPECT_EQ(net1.Estimate({Collective::kAllReduce, Range(8), sim::GiB(1)})->algorithm,
            Algorithm::kNvls);
  const Cluster four = Build("dgx-h100", 4);
  AnalyticNetwork net4(four);
  EXPECT_EQ(net4.Estimate({Collective::kAllReduce, Range(32), sim::KiB(64)})->algorithm,
            Algorithm::kTree);
  EXPECT_EQ(net4.Estimate({Collective::kAllReduce, Range(32), sim::GiB(1)})->algorithm,
            Algorithm::kRing);
  EXPECT_EQ(net4.Estimate({Collective::kAllGather, Range(32), sim::GiB(1)})->algorithm,
            Algorithm::kRing);
}

TEST(AnalyticNetworkTest, NvlinkBeatsPcieAndNetwork) {
  const Cluster dgx = Build("dgx-h100", 2);
  AnalyticNetwork net(dgx);
  const auto intra = net.Estimate({Collective::kSendRecv, {0, 1}, sim::GiB(1)});
  const auto inter = net.Estimate({Collective::kSendRecv, {0, 8}, sim::GiB(1)});
  ASSERT_TRUE(intra.ok() && inter.ok());
  // NVLink4 450 GB/s vs one NDR NIC 50 GB/s.
  EXPECT_GT(intra->busbw_gbs, 5 * inter->busbw_gbs);
  EXPECT_LT(inter->busbw_gbs, 50.0);
}

TEST(AnalyticNetworkTest, FewerThanTwoGpusCostNothing) {
  const Cluster c = Build("dgx-a100", 1);
  AnalyticNetwork net(c);
  absl::StatusOr<CollectiveEstimate> e = net.Estimate({Collective::kAllReduce, {3}, sim::MiB(8)});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->time, sim::Duration::Zero());
}

TEST(AnalyticNetworkTest, RejectsBadRequestsWithClearErrors) {
  const Cluster a100 = Build("dgx-a100", 1);
  AnalyticNetwork net(a100);
  auto message = [&](const CollectiveRequest& r) {
    absl::StatusOr<CollectiveEstimate> e = net.Estimate(r);
    EXPECT_FALSE(e.ok());
    return std::string(e.status().message());
  };
  EXPECT_THAT(message({Collective::kAllReduce, Range(8), sim::MiB(1), Algorithm::kNvls}),
              HasSubstr("dgx-a100' has no NVSwitch in-network reduction"));
  EXPECT_THAT(message({Collective::kAllReduce, {0, 8}, sim::MiB(1)}), HasSubstr("outside"));
  EXPECT_THAT(message({Collective::kAllReduce, {1, 1}, sim::MiB(1)}), HasSubstr("twice"));
  EXPECT_THAT(message({Collective::kAllReduce, {0, 1}, sim::Bytes(-1)}), HasSubstr("bytes"));
  EXPECT_THAT(message({Collective::kAllGather, Range(8), sim::MiB(1), Algorithm::kTree}),
              HasSubstr("all_reduce only"));
  EXPECT_THAT(message({Collective::kAllReduce, Range(8), sim::MiB(1), Algorithm::kHierarchical}),
              HasSubstr(">= 2 nodes"));
  EXPECT_THAT(message({Collective::kSendRecv, {0, 1, 2}, sim::MiB(1)}), HasSubstr("exactly 2"));
}

}  // namespace
}  // namespace clustersim::topology
