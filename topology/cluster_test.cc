#include "topology/cluster.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "topology/cluster_builder.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;

ClusterSpec Spec(std::string preset, int nodes) {
  ClusterSpec spec;
  spec.node_preset = std::move(preset);
  spec.num_nodes = nodes;
  return spec;
}

class PresetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PresetTest, BuildsValidatesAndRoutesEveryPair) {
  for (int nodes : {1, 3}) {
    absl::StatusOr<Cluster> c = BuildCluster(Spec(GetParam(), nodes));
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->num_nodes(), nodes);
    EXPECT_EQ(c->num_gpus(), nodes * c->gpus_per_node());
    EXPECT_THAT(c->Describe(), HasSubstr(GetParam()));
    for (int a = 0; a < c->num_gpus(); ++a) {
      for (int b = 0; b < c->num_gpus(); ++b) {
        std::vector<int> route = c->Route(a, b);
        if (a == b) {
          EXPECT_TRUE(route.empty());
          continue;
        }
        ASSERT_FALSE(route.empty());
        // The route is a connected walk from a to b with no GPU in between.
        EXPECT_EQ(c->link(route.front()).src, c->GpuVertex(a));
        EXPECT_EQ(c->link(route.back()).dst, c->GpuVertex(b));
        for (size_t i = 0; i + 1 < route.size(); ++i) {
          EXPECT_EQ(c->link(route[i]).dst, c->link(route[i + 1]).src);
          EXPECT_NE(c->vertex(c->link(route[i]).dst).kind, VertexKind::kGpu);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPresets, PresetTest, ::testing::ValuesIn(NodePresetNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(ClusterTest, DescribesOneDgxA100) {
  absl::StatusOr<Cluster> c = BuildCluster(Spec("dgx-a100", 1));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Describe(), "1x dgx-a100 (8 GPUs, NVLink3 via NVSwitch)");
  EXPECT_FALSE(c->nvls_capable());
  EXPECT_EQ(c->NodeOf(7), 0);
}

TEST(ClusterTest, NvlinkGpusTalkThroughTheNvSwitch) {
  absl::StatusOr<Cluster> c = BuildCluster(Spec("dgx-h100", 1));
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<int> route = c->Route(0, 5);
  ASSERT_EQ(route.size(), 2u);
  EXPECT_EQ(c->vertex(c->link(route[0]).dst).kind, VertexKind::kNvSwitch);
  EXPECT_EQ(c->link(route[0]).technology, "nvlink4");
  EXPECT_DOUBLE_EQ(c->link(route[0]).bandwidth.GigabytesPerSecond(), 450.0);
  ASSERT_TRUE(c->NvSwitchEdge(3).has_value());
}

TEST(ClusterTest, PcieGpusOnDifferentSwitchesCrossTheHostBridge) {
  absl::StatusOr<Cluster> c = BuildCluster(Spec("pcie-rtx4090-8x", 1));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->NvSwitchEdge(0).has_value());
  EXPECT_EQ(c->Route(0, 1).size(), 2u);  // same PCIe switch
  std::vector<int> far = c->Route(0, 7);
  ASSERT_EQ(far.size(), 4u);
  EXPECT_EQ(c->vertex(c->link(far[1]).dst).kind, VertexKind::kHostBridge);
}

TEST(ClusterTest, InterNodeRouteLeavesThroughANicAndTheFabric) {
  absl::StatusOr<Cluster> c = BuildCluster(Spec("dgx-a100", 2));
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<int> route = c->Route(0, 8);
  std::set<VertexKind> kinds;
  for (int e : route) kinds.insert(c->vertex(c->link(e).dst).kind);
  EXPECT_TRUE(kinds.count(VertexKind::kNic));
  EXPECT_TRUE(kinds.count(VertexKind::kLeaf));
  // Same rail (GPU 0 -> GPU 8 is rail 0 to rail 0): one leaf, no spine.
  EXPECT_FALSE(kinds.count(VertexKind::kSpine));
}

TEST(ClusterTest, RoutingIsDeterministicAndSpreadsOverEcmpSpines) {
  ClusterSpec spec = Spec("dgx-h100", 4);
  spec.fabric.leaf_radix = 4;  // 2 nodes per leaf, 2 spines
  absl::StatusOr<Cluster> a = BuildCluster(spec);
  absl::StatusOr<Cluster> b = BuildCluster(spec);
  ASSERT_TRUE(a.ok() && b.ok());
  std::set<std::string> spines_used;
  for (int src = 0; src < 16; ++src) {
    for (int dst = 16 + src % 8; dst < 32; dst += 8) {  // same rail, other leaf
      std::vector<int> r1 = a->Route(src, dst);
      EXPECT_EQ(r1, a->Route(src, dst));
      EXPECT_EQ(r1, b->Route(src, dst));
      for (int e : r1) {
        if (a->vertex(a->link(e).dst).kind == VertexKind::kSpine) {
          spines_used.insert(a->vertex(a->link(e).dst).name);
        }
      }
    }
  }
  EXPECT_EQ(spines_used.size(), 2u);  // ECMP uses every spine
}

TEST(ClusterTest, OversubscriptionReducesSpineCount) {
  ClusterSpec spec = Spec("dgx-h100", 4);
  spec.fabric.leaf_radix = 8;  // 4 node ports, 4 / 2 = 2 uplinks
  spec.fabric.oversubscription = 2.0;
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  ASSERT_TRUE(c.ok()) << c.status();
  int spines = 0;
  for (int v = 0; v < c->num_vertices(); ++v) {
    spines += c->vertex(v).kind == VertexKind::kSpine;
  }
  EXPECT_EQ(spines, 2);
}

TEST(ClusterTest, BuildsThreeTierAndSingleSwitchAndEthernetFabrics) {
  for (const char* kind : {"single-switch", "fat-tree"}) {
    ClusterSpec spec = Spec("pcie-l40s-8x", 6);
    spec.fabric.kind = kind;
    spec.fabric.tiers = 3;
    spec.fabric.leaf_radix = 4;
    spec.fabric.link = "roce-400g";
    absl::StatusOr<Cluster> c = BuildCluster(spec);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_THAT(c->Describe(), HasSubstr("roce-400g"));
    EXPECT_FALSE(c->Route(0, 47).empty());
  }
}

// Ethernet/RoCE at 100, 200 and 400 Gb/s: the NIC and switch links take the speed.
TEST(ClusterTest, EthernetSpeedsSetTheFabricLinkBandwidth) {
  for (const auto& [link, gbps] :
       std::vector<std::pair<std::string, double>>{{"roce-100g", 100}, {"roce-200g", 200},
                                                   {"roce-400g", 400}}) {
    ClusterSpec spec = Spec("dgx-h100", 4);
    spec.fabric.link = link;
    spec.fabric.leaf_radix = 4;  // 2 nodes per leaf: node 0 -> node 3 crosses a spine
    absl::StatusOr<Cluster> c = BuildCluster(spec);
    ASSERT_TRUE(c.ok()) << c.status();
    int ethernet = 0;
    for (int e : c->Route(0, 31)) {
      const Link& l = c->link(e);
      if (l.kind != LinkKind::kEthernet) continue;
      ++ethernet;
      EXPECT_NEAR(l.bandwidth.BytesPerSecond() * 8e-9, gbps, 1e-6) << link;
    }
    EXPECT_GE(ethernet, 4) << link << ": NIC -> leaf -> spine -> leaf -> NIC";
  }
}

TEST(ClusterTest, UnknownPresetListsValidOnes) {
  absl::StatusOr<Cluster> c = BuildCluster(Spec("dgx-z100", 1));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("dgx-z100"));
  for (const std::string& name : NodePresetNames()) {
    EXPECT_THAT(c.status().message(), HasSubstr(name));
  }
}

TEST(ClusterTest, RejectsBadSpecFields) {
  EXPECT_THAT(BuildCluster(Spec("dgx-a100", 0)).status().message(), HasSubstr("num_nodes"));
  ClusterSpec spec = Spec("dgx-a100", 2);
  spec.fabric.kind = "torus";
  EXPECT_THAT(BuildCluster(spec).status().message(), HasSubstr("fabric.kind"));
  spec = Spec("dgx-a100", 2);
  spec.fabric.oversubscription = 0.5;
  EXPECT_THAT(BuildCluster(spec).status().message(), HasSubstr("oversubscription"));
  spec = Spec("dgx-a100", 2);
  spec.fabric.link = "nvlink4";
  EXPECT_THAT(BuildCluster(spec).status().message(), HasSubstr("fabric.link"));
  spec.fabric.link = "ib-qdr";
  EXPECT_THAT(BuildCluster(spec).status().message(), HasSubstr("ib-ndr"));
  spec = Spec("dgx-a100", 2);
  spec.fabric.tiers = 4;
  EXPECT_THAT(BuildCluster(spec).status().message(), HasSubstr("fabric.tiers"));
}

TEST(ClusterBuilderTest, RejectsDisconnectedGpu) {
  ClusterBuilder b;
  const LinkTechnology& nv = *FindLinkTechnology("nvlink4").value();
  int sw = b.AddVertex(VertexKind::kNvSwitch, 0, "sw");
  b.AddLink(b.AddVertex(VertexKind::kGpu, 0, "gpu0"), sw, nv);
  b.AddLink(b.AddVertex(VertexKind::kGpu, 0, "gpu1"), sw, nv);
  b.AddVertex(VertexKind::kGpu, 0, "lonely");
  absl::StatusOr<Cluster> c = std::move(b).Build();
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("lonely"));
  EXPECT_THAT(c.status().message(), HasSubstr("cannot reach"));
}

TEST(ClusterBuilderTest, GpusDoNotForwardTraffic) {
  // gpu0 - gpu1 - gpu2 in a chain: gpu2 reaches gpu0 only through gpu1.
  ClusterBuilder b;
  const LinkTechnology& nv = *FindLinkTechnology("nvlink4").value();
  int g0 = b.AddVertex(VertexKind::kGpu, 0, "gpu0");
  int g1 = b.AddVertex(VertexKind::kGpu, 0, "gpu1");
  int g2 = b.AddVertex(VertexKind::kGpu, 0, "gpu2");
  b.AddLink(g0, g1, nv);
  b.AddLink(g1, g2, nv);
  EXPECT_FALSE(std::move(b).Build().ok());
}

TEST(ClusterBuilderTest, RejectsZeroBandwidthLink) {
  ClusterBuilder b;
  int g0 = b.AddVertex(VertexKind::kGpu, 0, "gpu0");
  int g1 = b.AddVertex(VertexKind::kGpu, 0, "gpu1");
  b.AddLink(g0, g1, LinkKind::kPcie, "broken", sim::Bandwidth::Gbps(100),
            sim::Bandwidth::Gbps(0), sim::Nanoseconds(100));
  absl::StatusOr<Cluster> c = std::move(b).Build();
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("zero bandwidth"));
  EXPECT_THAT(c.status().message(), HasSubstr("gpu0"));
}

TEST(ClusterBuilderTest, KeepsPerDirectionBandwidth) {
  ClusterBuilder b;
  int g0 = b.AddVertex(VertexKind::kGpu, 0, "gpu0");
  int g1 = b.AddVertex(VertexKind::kGpu, 0, "gpu1");
  b.AddLink(g0, g1, LinkKind::kPcie, "asym", sim::Bandwidth::Gbps(100),
            sim::Bandwidth::Gbps(40), sim::Nanoseconds(100));
  absl::StatusOr<Cluster> c = std::move(b).Build();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->link(c->Route(0, 1)[0]).bandwidth, sim::Bandwidth::Gbps(100));
  EXPECT_EQ(c->link(c->Route(1, 0)[0]).bandwidth, sim::Bandwidth::Gbps(40));
  EXPECT_EQ(c->link(c->link(c->Route(0, 1)[0]).reverse).bandwidth, sim::Bandwidth::Gbps(40));
}

}  // namespace
}  // namespace clustersim::topology

namespace clustersim::topology {
namespace {

TEST(ClusterTest, CustomNodeBuildsAndRejectsBadLinks) {
  ClusterSpec spec;
  spec.num_nodes = 2;
  spec.custom_node = CustomNodeSpec{.gpus_per_node = 4, .gpu_link = "", .nvls = false,
                                    .pcie = "pcie4-x16", .pcie_switches = 2, .nics = 2,
                                    .nic_link = "roce-100g"};
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_gpus(), 8);
  EXPECT_FALSE(c->NvSwitchEdge(0).has_value());
  EXPECT_FALSE(c->Route(0, 7).empty());
  spec.custom_node->gpu_link = "nvlink9";
  absl::StatusOr<Cluster> bad = BuildCluster(spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cluster.custom_node"), std::string::npos);
  spec.custom_node->gpu_link = "";
  spec.custom_node->nvls = true;
  EXPECT_FALSE(BuildCluster(spec).ok());
}

}  // namespace
}  // namespace clustersim::topology
