// File: topology/route_search.h
//
// Cheapest routes between GPUs of a sealed Cluster (the rules are Cluster::Route's:
// a link costs its latency plus the time to move 1 MB over it; no GPU but the
// source forwards; a route enters no server but the two it joins; among
// equal-cost predecessors the walk back from the destination picks by a stable
// hash of (src, dst, hop)).
//
// Two ways to label the vertices with their cost from the source, giving the
// same routes:
//   - kDijkstra: one Dijkstra from the source over the two servers and the
//     fabric, stopped once the destination is settled. On a large fabric a
//     route between servers settles nearly every switch: O(fabric) per route.
//   - kFabricTables: the source's server is searched alone; a switch's cost is
//     the cheapest of (cost to one of the server's exits + the switch's
//     distance from that exit's switch over switches only), the distances
//     kept per switch that some server attaches to (one fabric Dijkstra each,
//     on first use); the destination's server is searched from its entries.
//     Exact when no path through either server (in from one switch, out to
//     another) costs as little as the switches' own distance, which is
//     checked per server; otherwise, and inside one server, the route falls
//     back to kDijkstra. The walk back reads labels only on cheapest paths
//     and their in-neighbours, where both ways agree (route_search.cc says why).
//
// kAuto uses the tables where they apply. Not thread-safe (scratch and tables
// are members); Cluster::Route serialises its calls.
#ifndef CLUSTERSIM_TOPOLOGY_ROUTE_SEARCH_H_
#define CLUSTERSIM_TOPOLOGY_ROUTE_SEARCH_H_

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace clustersim::topology {

class Cluster;

class RouteSearch {
 public:
  enum class Method { kAuto, kDijkstra, kFabricTables };
  // Keeps no reference: each Route names the cluster it was built from.
  explicit RouteSearch(const Cluster& cluster, Method method = Method::kAuto);

  // Directed edge ids from GPU `src` to GPU `dst` of `cluster` (empty when
  // they are equal). REQUIRES: the cluster this search was built from (or a
  // moved-to copy); both valid GPU indices.
  std::vector<int> Route(const Cluster& cluster, int src, int dst);
  // Routes labelled from the fabric tables so far (the rest by kDijkstra).
  int64_t tabled_routes() const { return tabled_routes_; }

  // A link's routing cost: picoseconds to move 1 MB over it plus its latency.
  static int64_t LinkCost(const Cluster& cluster, int e);

 private:
  static constexpr int64_t kUnreached = std::numeric_limits<int64_t>::max();
  // Dijkstra from s into dist_ until t is settled; `nodes` names the servers
  // it may enter (both -1: every server). Whether t was reached.
  bool Search(int s, int t, std::pair<int, int> nodes);
  // dist_ for the route s -> t between servers from the fabric tables; false
  // (nothing labelled) when a table check fails for either server.
  bool LabelFromTables(int s, int t);
  // Dijkstra confined to server `node` from `seeds` (vertex, cost); GPUs other
  // than `source` do not forward. Labels into dist_.
  void SearchServer(int node, int source, const std::vector<std::pair<int, int64_t>>& seeds);
  // The switch-only distances from switch `sw` (by fabric index), computed on first use.
  const std::vector<int64_t>& FabricRow(int sw);
  // Whether no path through server `node` between two switches costs as
  // little as the switches' own distance (cached per server).
  bool NoTransitThrough(int node);
  // Cost label of vertex u for the walk (dist_ or, for switches under the
  // tables, from the source's exits).
  int64_t Label(int u) const;
  void ResetLabels();

  Method method_;
  // The graph in flat arrays: out-edges of v are edge ids [first_edge_[v],
  // first_edge_[v + 1]) with their heads, reverses and costs; per vertex its
  // server (-1: fabric) and whether it is a GPU.
  std::vector<int> first_edge_, head_, reverse_;
  std::vector<int64_t> cost_;
  std::vector<int> node_;
  std::vector<uint8_t> is_gpu_;
  // The same edges reordered: per vertex, edges into the fabric first, then
  // edges into servers sorted by server ([first_server_edge_[v], end)).
  std::vector<int> search_edge_, first_server_edge_;
  // Per server: its edges to and from switches.
  std::vector<std::vector<int>> server_entries_;  // switch -> server edges
  std::vector<std::vector<int>> server_exits_;    // server -> switch edges
  // Switches by fabric index.
  std::vector<int> fabric_index_;  // per vertex, -1 for server vertices
  std::vector<int> fabric_vertex_;
  std::vector<std::vector<int64_t>> fabric_rows_;  // per fabric index; empty until used
  std::vector<int8_t> no_transit_;                 // per server: -1 unknown, 0, 1
  // Labels of the last route, reset through touched_.
  std::vector<int64_t> dist_;
  std::vector<int> touched_;
  // Under the tables: the source's exits (switch fabric index, cost there).
  bool tables_ = false;
  std::vector<std::pair<int, int64_t>> exits_;
  int64_t tabled_routes_ = 0;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_ROUTE_SEARCH_H_
