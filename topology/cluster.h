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
// others), unless the servers are chained without switches. Cost: searches
// of the two servers, plus switch-to-switch distances kept per switch that a
// server attaches to (route_search.h); where those do not apply, one Dijkstra
// with early exit over the two servers and the fabric's switches.
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
#include "topology/route_search.h"

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
  // and again. The cache is guarded by a mutex, so concurrent callers are safe.
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
  struct RouteCache {
    std::mutex mu;
    std::map<std::pair<int, int>, std::vector<int>> routes;  // node-stable references
    std::unique_ptr<RouteSearch> search;                      // built on the first route
  };
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
