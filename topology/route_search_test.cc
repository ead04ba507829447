#include "topology/route_search.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "topology/cluster.h"
#include "topology/cluster_builder.h"

namespace clustersim::topology {
namespace {

// Every ordered pair (or every `stride`-th source) routed both ways; returns
// how many routes the tables labelled.
int64_t ExpectSameRoutes(const Cluster& c, int stride = 1) {
  RouteSearch dijkstra(c, RouteSearch::Method::kDijkstra);
  RouteSearch tables(c, RouteSearch::Method::kFabricTables);
  for (int src = 0; src < c.num_gpus(); src += stride) {
    for (int dst = 0; dst < c.num_gpus(); ++dst) {
      EXPECT_EQ(dijkstra.Route(c, src, dst), tables.Route(c, src, dst))
          << c.Describe() << ": GPU " << src << " -> " << dst;
    }
  }
  EXPECT_EQ(dijkstra.tabled_routes(), 0);
  return tables.tabled_routes();
}

ClusterSpec Spec(std::string preset, int nodes, int tiers, int radix, double oversub = 1.0) {
  ClusterSpec spec;
  spec.node_preset = std::move(preset);
  spec.num_nodes = nodes;
  spec.fabric.tiers = tiers;
  spec.fabric.leaf_radix = radix;
  spec.fabric.oversubscription = oversub;
  return spec;
}

// Where a server bridges its NICs more cheaply than the switches do (PCIe
// nodes on slow Ethernet under a 3-tier fabric), its routes use the search:
// the tables must label most presets' routes, and all must agree.
TEST(RouteSearchTest, TablesGiveTheSearchsRoutesOnEveryPresetAndFabric) {
  int cases = 0;
  int tabled = 0;
  for (const std::string& preset : NodePresetNames()) {
    for (const ClusterSpec& spec :
         {Spec(preset, 5, 2, 4), Spec(preset, 9, 3, 4), Spec(preset, 6, 2, 8, 2.0)}) {
      absl::StatusOr<Cluster> c = BuildCluster(spec);
      ASSERT_TRUE(c.ok()) << preset << ": " << c.status();
      // About 16 sources per cluster, every destination.
      ++cases;
      tabled += ExpectSameRoutes(*c, std::max(1, c->num_gpus() / 16)) > 0;
    }
  }
  EXPECT_GE(tabled, cases * 3 / 4);
}

TEST(RouteSearchTest, SingleSwitchAndReducedNicCountsAgree) {
  ClusterSpec spec = Spec("dgx-a100", 4, 2, 64);
  spec.fabric.kind = "single-switch";
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(ExpectSameRoutes(*c), 0);
  spec = Spec("dgx-h100", 6, 3, 4);
  spec.nics_per_node = 2;
  c = BuildCluster(spec);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(ExpectSameRoutes(*c), 0);
}

TEST(RouteSearchTest, LargeThreeTierFabric) {
  // 64 nodes, 512 GPUs: leaves of 8 node ports, pods, spines and cores.
  absl::StatusOr<Cluster> c = BuildCluster(Spec("dgx-h100", 64, 3, 16));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(ExpectSameRoutes(*c, /*stride=*/37), 0);
}

// Servers whose NICs are joined inside the server more cheaply than the
// switches join them: routes into or out of such a server fall back to the
// search, with the same routes.
TEST(RouteSearchTest, ServerCheaperThanTheFabricFallsBackToTheSearch) {
  ClusterBuilder b;
  const auto bw = sim::Bandwidth::Gbps(400);
  const auto slow = sim::Bandwidth::Gbps(25);
  const auto lat = sim::Nanoseconds(500);
  const int leaf1 = b.AddVertex(VertexKind::kLeaf, -1, "leaf1");
  const int leaf2 = b.AddVertex(VertexKind::kLeaf, -1, "leaf2");
  const int spine = b.AddVertex(VertexKind::kSpine, -1, "spine");
  b.AddLink(leaf1, spine, LinkKind::kInfiniband, "slow", slow, slow, lat);
  b.AddLink(leaf2, spine, LinkKind::kInfiniband, "slow", slow, slow, lat);
  // A node of one GPU and one NIC on `leaf`.
  const auto add_node = [&](int node, int leaf) {
    const std::string name = "n" + std::to_string(node);
    const int gpu = b.AddVertex(VertexKind::kGpu, node, name + "/gpu");
    const int nic = b.AddVertex(VertexKind::kNic, node, name + "/nic");
    b.AddLink(gpu, nic, LinkKind::kPcie, "pcie", bw, bw, lat);
    b.AddLink(nic, leaf, LinkKind::kInfiniband, "ib", bw, bw, lat);
  };
  // Node 0 on leaf1, node 2 on leaf2, node 1 on both with a fast bridge.
  add_node(0, leaf1);
  const int g1 = b.AddVertex(VertexKind::kGpu, 1, "n1/gpu");
  const int p1 = b.AddVertex(VertexKind::kPcieSwitch, 1, "n1/pcie");
  const int n1a = b.AddVertex(VertexKind::kNic, 1, "n1/nic0");
  const int n1b = b.AddVertex(VertexKind::kNic, 1, "n1/nic1");
  b.AddLink(g1, p1, LinkKind::kPcie, "pcie", bw, bw, lat);
  b.AddLink(p1, n1a, LinkKind::kPcie, "pcie", bw, bw, lat);
  b.AddLink(p1, n1b, LinkKind::kPcie, "pcie", bw, bw, lat);
  b.AddLink(n1a, leaf1, LinkKind::kInfiniband, "ib", bw, bw, lat);
  b.AddLink(n1b, leaf2, LinkKind::kInfiniband, "ib", bw, bw, lat);
  add_node(2, leaf2);
  absl::StatusOr<Cluster> c = std::move(b).Build();
  ASSERT_TRUE(c.ok()) << c.status();
  RouteSearch tables(*c, RouteSearch::Method::kFabricTables);
  RouteSearch dijkstra(*c, RouteSearch::Method::kDijkstra);
  EXPECT_EQ(tables.Route(*c, 0, 1), dijkstra.Route(*c, 0, 1));
  EXPECT_EQ(tables.tabled_routes(), 0);  // node 1 carries traffic more cheaply than the spine
  EXPECT_EQ(tables.Route(*c, 0, 2), dijkstra.Route(*c, 0, 2));
  EXPECT_EQ(tables.tabled_routes(), 1);  // nodes 0 and 2 do not
  // Confined to nodes 0 and 2, the route crosses the slow spine.
  bool spine_crossed = false;
  for (int e : tables.Route(*c, 0, 2)) spine_crossed |= c->link(e).dst == spine;
  EXPECT_TRUE(spine_crossed);
  EXPECT_EQ(ExpectSameRoutes(*c), 2);  // 0 <-> 2 only
}

}  // namespace
}  // namespace clustersim::topology
