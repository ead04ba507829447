#include "topology/analytic_network.h"

#include <numeric>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/check.h"
#include "topology/cluster.h"
#include "topology/collective_calibration.h"

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

TEST(AnalyticNetworkTest, ProtocolsFollowNcclsTuningModel) {
  const Cluster one = Build("dgx-h100", 1);
  AnalyticNetwork net1(one);
  const auto at = [&](sim::Bytes bytes, Algorithm a = Algorithm::kRing,
                      Protocol p = Protocol::kAuto) {
    absl::StatusOr<CollectiveEstimate> e = net1.Estimate({Collective::kAllReduce, Range(8), bytes, a, p});
    SIM_CHECK(e.ok()) << e.status();
    return *e;
  };
  // Smallest latency first, highest bandwidth last.
  EXPECT_EQ(at(sim::KiB(64)).protocol, Protocol::kLl);
  EXPECT_EQ(at(sim::MiB(32)).protocol, Protocol::kLl128);
  EXPECT_EQ(at(sim::GiB(1)).protocol, Protocol::kSimple);
  EXPECT_EQ(at(sim::GiB(1), Algorithm::kAuto).protocol, Protocol::kSimple);  // NVLS
  // Bandwidth fractions: LL about half of Simple, LL128 0.92 of it, at large sizes.
  const double simple = at(sim::GiB(4), Algorithm::kRing, Protocol::kSimple).busbw_gbs;
  EXPECT_NEAR(at(sim::GiB(4), Algorithm::kRing, Protocol::kLl).busbw_gbs / simple, 0.5, 0.01);
  EXPECT_NEAR(at(sim::GiB(4), Algorithm::kRing, Protocol::kLl128).busbw_gbs / simple, 0.92, 0.01);
  // Latencies: LL is the fastest at 8 bytes, Simple the slowest.
  EXPECT_LT(at(sim::Bytes(8), Algorithm::kRing, Protocol::kLl).time,
            at(sim::Bytes(8), Algorithm::kRing, Protocol::kLl128).time);
  EXPECT_LT(at(sim::Bytes(8), Algorithm::kRing, Protocol::kLl128).time,
            at(sim::Bytes(8), Algorithm::kRing, Protocol::kSimple).time);

  // Across nodes the paths include the network: no LL128 (NCCL enables it on NVLink only).
  const Cluster four = Build("dgx-h100", 4);
  AnalyticNetwork net4(four);
  for (int64_t kib = 1; kib <= (int64_t{1} << 22); kib *= 4) {
    absl::StatusOr<CollectiveEstimate> e =
        net4.Estimate({Collective::kAllReduce, Range(32), sim::KiB(kib)});
    ASSERT_TRUE(e.ok());
    EXPECT_NE(e->protocol, Protocol::kLl128) << kib << " KiB";
  }
  absl::StatusOr<CollectiveEstimate> ll128 = net4.Estimate(
      {Collective::kAllReduce, Range(32), sim::MiB(1), Algorithm::kRing, Protocol::kLl128});
  ASSERT_FALSE(ll128.ok());
  EXPECT_THAT(ll128.status().message(), HasSubstr("protocol=ll128 cannot run algorithm ring"));
  absl::StatusOr<CollectiveEstimate> nvls_ll = net1.Estimate(
      {Collective::kAllReduce, Range(8), sim::MiB(1), Algorithm::kNvls, Protocol::kLl});
  ASSERT_FALSE(nvls_ll.ok());
  EXPECT_THAT(nvls_ll.status().message(), HasSubstr("NVLS runs Simple only"));
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

// On a PCIe node of 2 switches x 4 GPUs (pcie-l40s-8x) a ring of the 4 GPUs
// under one switch keeps P2P, and a ring of all 8 crosses the host bridge
// twice: NCCL runs those hops over its SHM transport (P2P level PXB for more
// than 2 GPUs), which loads every link of the hop 1/shm_efficiency times per
// byte and so slows the whole ring to shm_efficiency of its P2P bandwidth.
// Two GPUs across the bridge keep P2P.
TEST(AnalyticNetworkTest, PcieRingAcrossTheHostBridgeRunsOverShm) {
  const Cluster c = Build("pcie-l40s-8x", 1);
  AnalyticNetwork net(c);
  const auto busbw = [&](std::vector<int> gpus) {
    absl::StatusOr<CollectiveEstimate> e = net.Estimate(
        {Collective::kAllReduce, gpus, sim::GiB(1), Algorithm::kRing, Protocol::kSimple});
    SIM_CHECK(e.ok()) << e.status();
    return e->busbw_gbs;
  };
  const double shm = DefaultCollectiveCalibration().shm_efficiency;
  EXPECT_GT(shm, 0.5);
  EXPECT_LT(shm, 1.0);
  const double p2p = busbw(Range(4));
  EXPECT_NEAR(p2p, 31.5 * 0.88, 0.5);
  EXPECT_NEAR(busbw(Range(8)) / p2p, shm, 0.01);
  EXPECT_NEAR(busbw({0, 4}) / p2p, 1.0, 0.01);
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

// Jean Zay's Omni-Path nodes (4 x opa-100 per 8 A100s): NCCL's measured rate
// per link and one link per ring crossing a node (collective_calibration's
// opa-100 row), where a NIC technology without a row of its own gets a
// channel per NIC at its kind's 0.95 of line rate.
Cluster JeanZay(int nodes, const std::string& nic_link) {
  ClusterSpec spec;
  spec.custom_node = CustomNodeSpec{.gpus_per_node = 8, .gpu_link = "nvlink3", .nvls = false,
                                    .pcie = "pcie4-x16", .pcie_switches = 4, .nics = 4,
                                    .nic_link = nic_link};
  spec.num_nodes = nodes;
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  SIM_CHECK(c.ok()) << c.status();
  return *std::move(c);
}

TEST(AnalyticNetworkTest, OmniPathRunsAtNcclsMeasuredRateThroughOneLinkPerRing) {
  const Cluster opa = JeanZay(4, "opa-100");
  AnalyticNetwork net(opa);
  const sim::Bytes bytes(4000000000);
  absl::StatusOr<CollectiveEstimate> ring =
      net.Estimate({Collective::kAllReduce, Range(32), bytes, Algorithm::kRing});
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_NEAR(ring->busbw_gbs, 12.5 * 0.405, 0.05);  // one 100 Gb/s link at 0.405
  // A send between nodes keeps its GPU's own link, at the same rate.
  absl::StatusOr<CollectiveEstimate> send =
      net.Estimate({Collective::kSendRecv, {0, 8}, sim::MiB(256), Algorithm::kRing});
  ASSERT_TRUE(send.ok()) << send.status();
  EXPECT_NEAR(send->algbw_gbs, 12.5 * 0.405, 0.1);
  // The same node with 100 Gb/s RoCE links (no row): a channel per link at 0.95.
  const Cluster ib = JeanZay(4, "roce-100g");
  AnalyticNetwork ib_net(ib);
  absl::StatusOr<CollectiveEstimate> ib_ring =
      ib_net.Estimate({Collective::kAllReduce, Range(32), bytes, Algorithm::kRing});
  ASSERT_TRUE(ib_ring.ok()) << ib_ring.status();
  EXPECT_GT(ib_ring->busbw_gbs, 4 * 12.5 * 0.9);
}

}  // namespace
}  // namespace clustersim::topology
