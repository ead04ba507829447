// File: topology/cluster.h
//
// A sealed, immutable cluster graph: GPUs, NVSwitches, PCIe switches, host
// bridges, NICs and fabric switches (vertices), joined by links (pairs of
// directed edges, each with its own bandwidth and latency), stored as a
// Boost.Graph compressed-sparse-row graph. Build one with BuildCluster (from a
// preset) or ClusterBuilder (custom, cluster_builder.h); both validate first.
//
// Routing: Route(src, dst) is a cheapest path that never transits a GPU, where a
// link costs its latency plus the time to move 1 MB over it (so NVLink wins over
// PCIe inside a node and identical fabric links tie). Among equal-cost
// predecessors (ECMP) it picks by a stable hash of (src, dst, hop), so the same
// pair always gets the same path, on every run and every machine. A route
// enters no server but the two it joins (hosts do not forward between
// others), unless the servers are chained without switches. Cost: one
// Dijkstra search with early exit over the two servers and the fabric's
// switches, O((V + E) log V) worst case.
//
// Example:
//   absl::StatusOr<Cluster> c = BuildCluster({.node_preset = "dgx-h100", .num_nodes = 2});
//   std::vector<int> path = c->Route(0, 8);          // directed edge ids
//   for (int e : path) sim::Bandwidth bw = c->link(e).bandwidth;
//
// Thread-safety: all methods are const and safe to call concurrently.
#ifndef CLUSTERSIM_TOPOLOGY_CLUSTER_H_
#define CLUSTERSIM_TOPOLOGY_CLUSTER_H_

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "boost/graph/compressed_sparse_row_graph.hpp"
#include "boost/range/iterator_range.hpp"
#include "sim/units.h"
#include "topology/cluster_spec.h"
#include "topology/link_technology.h"
#include "topology/node_preset.h"

namespace clustersim::topology {

enum class VertexKind { kGpu, kNvSwitch, kPcieSwitch, kHostBridge, kNic, kLeaf, kSpine, kCore };

std::string_view VertexKindName(VertexKind kind);

struct Vertex {
  VertexKind kind;
  int node;          // server index, or -1 for fabric switches
  std::string name;  // unique, e.g. "node3/gpu5", "rail2/leaf0"
};

// One direction of a link.
struct Link {
  int src;                    // vertex ids
  int dst;
  LinkKind kind;
  std::string_view technology;  // e.g. "nvlink4"; static storage
  sim::Bandwidth bandwidth;     // this direction
  sim::Duration latency;
  int reverse;                  // edge id of the opposite direction
};

class Cluster {
 public:
  int num_gpus() const { return static_cast<int>(gpu_vertex_.size()); }
  int num_nodes() const { return num_nodes_; }
  // GPUs per node (the largest node when a custom cluster is uneven).
  int gpus_per_node() const { return gpus_per_node_; }
  // REQUIRES: 0 <= gpu < num_gpus().
  int NodeOf(int gpu) const;
  const std::string& node_preset() const { return node_preset_; }
  // One line, e.g. "2x dgx-h100 (16 GPUs, NVLink4 via NVSwitch, NVLS; fat-tree 2-tier ib-ndr)".
  std::string Describe() const;
  // True when the NVSwitches can reduce in-network (NVLS, H100 and later).
  bool nvls_capable() const { return nvls_capable_; }

  int num_vertices() const { return static_cast<int>(vertices_.size()); }
  int num_links() const { return static_cast<int>(links_.size()); }  // directed edges
  const Vertex& vertex(int v) const;
  const Link& link(int e) const;
  // Vertex id of a GPU. REQUIRES: 0 <= gpu < num_gpus().
  int GpuVertex(int gpu) const;
  // The GPU's edge to its NVSwitch, if it has one.
  std::optional<int> NvSwitchEdge(int gpu) const;

  // Directed edge ids from GPU `src` to GPU `dst` (empty when src == dst).
  // REQUIRES: both valid GPU indices (the cluster is connected by construction).
  // Routes are memoised: collectives ask for the same ring neighbours again
  // and again, and each fresh route is a Dijkstra over the fabric. The cache
  // is guarded by a mutex, so concurrent callers are safe.
  const std::vector<int>& Route(int src, int dst) const;

 private:
  friend class ClusterBuilder;
  using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
  Cluster() = default;
  // Out-edges of vertex `v` as a range of CSR edge descriptors.
  auto OutEdges(int v) const {
    return boost::make_iterator_range(
        boost::out_edges(static_cast<Graph::vertex_descriptor>(v), graph_));
  }
  int64_t LinkCost(int e) const;
  std::vector<int> ComputeRoute(int src, int dst) const;
  // Dijkstra from GPU vertex s until t is settled. `nodes` names the servers
  // the search may enter (both -1: every server).
  bool Search(int s, int t, std::pair<int, int> nodes) const;
  static constexpr int64_t kUnreachedCost = std::numeric_limits<int64_t>::max();
  struct RouteCache {
    std::mutex mu;
    std::map<std::pair<int, int>, std::vector<int>> routes;  // node-stable references
    // Search scratch, guarded by mu: cheapest cost per vertex, and the
    // vertices the last search labelled (reset before the next one).
    std::vector<int64_t> dist;
    std::vector<int> touched;
    // The graph as the searches read it, in flat arrays built on the first
    // route: out-edges of v are edge ids [first_edge[v], first_edge[v + 1])
    // (CSR order), with their heads, reverses and costs; per vertex its
    // server (-1: fabric) and whether it is a GPU.
    std::vector<int> first_edge;
    std::vector<int> head;
    std::vector<int> reverse;
    std::vector<int64_t> cost;
    std::vector<int> node;
    std::vector<uint8_t> is_gpu;
    // The same edges reordered for the search: per vertex, edges into the
    // fabric first, then edges into servers sorted by server, so a fabric
    // switch relaxes only the edges into the two servers a route may enter
    // (a leaf's edges into other servers' NICs are skipped unread).
    std::vector<int> search_edge;         // edge ids, [first_edge[v], first_edge[v + 1])
    std::vector<int> first_server_edge;   // per vertex, into search_edge
  };
  // Fills the RouteCache's flat arrays. REQUIRES: route_cache_->mu held.
  void PrepareRouting() const;
  int EdgeId(Graph::edge_descriptor e) const {
    return static_cast<int>(boost::get(boost::edge_index, graph_, e));
  }

  Graph graph_;
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;  // index = CSR edge index
  std::vector<int> gpu_vertex_;
  std::vector<int> gpu_node_;
  int num_nodes_ = 0;
  int gpus_per_node_ = 0;
  std::string node_preset_;
  std::string description_;
  bool nvls_capable_ = false;
  std::unique_ptr<RouteCache> route_cache_ = std::make_unique<RouteCache>();
};

// Builds, validates and seals the cluster a spec describes. Errors (InvalidArgument
// or NotFound) name the field: unknown node_preset (lists valid ones), num_nodes <= 0,
// unknown fabric.kind / fabric.link, fabric.tiers not 2 or 3, oversubscription < 1,
// nics_per_node < 0, leaf_radix < 2.
absl::StatusOr<Cluster> BuildCluster(const ClusterSpec& spec);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_CLUSTER_H_
