#include "topology/cluster.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/check.h"
#include "sim/random.h"

namespace clustersim::topology {

std::string_view VertexKindName(VertexKind kind) {
  switch (kind) {
    case VertexKind::kGpu:
      return "gpu";
    case VertexKind::kNvSwitch:
      return "nvswitch";
    case VertexKind::kPcieSwitch:
      return "pcie-switch";
    case VertexKind::kHostBridge:
      return "host-bridge";
    case VertexKind::kNic:
      return "nic";
    case VertexKind::kLeaf:
      return "leaf";
    case VertexKind::kSpine:
      return "spine";
    case VertexKind::kCore:
      return "core";
  }
  return "unknown";
}

int Cluster::NodeOf(int gpu) const {
  SIM_CHECK(gpu >= 0 && gpu < num_gpus()) << "GPU index " << gpu << " out of range";
  return gpu_node_[gpu];
}

std::string Cluster::Describe() const {
  return absl::StrCat(num_nodes_, "x ", node_preset_, " (", num_gpus(), " GPUs, ", description_,
                      ")");
}

const Vertex& Cluster::vertex(int v) const {
  SIM_CHECK(v >= 0 && v < num_vertices()) << "vertex id " << v << " out of range";
  return vertices_[v];
}

const Link& Cluster::link(int e) const {
  SIM_CHECK(e >= 0 && e < num_links()) << "edge id " << e << " out of range";
  return links_[e];
}

int Cluster::GpuVertex(int gpu) const {
  SIM_CHECK(gpu >= 0 && gpu < num_gpus()) << "GPU index " << gpu << " out of range";
  return gpu_vertex_[gpu];
}

std::optional<int> Cluster::NvSwitchEdge(int gpu) const {
  for (auto e : OutEdges(GpuVertex(gpu))) {
    const int id = EdgeId(e);
    if (vertices_[links_[id].dst].kind == VertexKind::kNvSwitch) return id;
  }
  return std::nullopt;
}

int64_t Cluster::LinkCost(int e) const {
  // Time to move 1 MB over the link, in picoseconds, plus its latency: prefers
  // NVLink over PCIe between GPUs of one node; equal links give exact ties.
  const Link& l = links_[e];
  return 8'000'000'000'000'000'000 / l.bandwidth.bits_per_second() + l.latency.picoseconds();
}

const std::vector<int>& Cluster::Route(int src, int dst) const {
  std::lock_guard<std::mutex> lock(route_cache_->mu);
  auto [it, inserted] = route_cache_->routes.try_emplace({src, dst});
  if (inserted) {
    if (route_cache_->first_edge.empty()) PrepareRouting();
    it->second = ComputeRoute(src, dst);
  }
  return it->second;
}

void Cluster::PrepareRouting() const {
  RouteCache& rc = *route_cache_;
  const int n = num_vertices();
  rc.first_edge.assign(n + 1, 0);
  rc.node.resize(n);
  rc.is_gpu.resize(n);
  for (int v = 0; v < n; ++v) {
    rc.node[v] = vertices_[v].node;
    rc.is_gpu[v] = vertices_[v].kind == VertexKind::kGpu;
    const auto degree = boost::out_degree(static_cast<Graph::vertex_descriptor>(v), graph_);
    rc.first_edge[v + 1] = rc.first_edge[v] + static_cast<int>(degree);
  }
  rc.head.resize(links_.size());
  rc.reverse.resize(links_.size());
  rc.cost.resize(links_.size());
  for (int v = 0; v < n; ++v) {
    int e = rc.first_edge[v];
    for (auto edge : OutEdges(v)) {
      SIM_CHECK(EdgeId(edge) == e) << "CSR edges out of order at " << vertices_[v].name;
      rc.head[e] = static_cast<int>(boost::target(edge, graph_));
      rc.reverse[e] = links_[e].reverse;
      rc.cost[e] = LinkCost(e);
      ++e;
    }
  }
  rc.search_edge.resize(links_.size());
  rc.first_server_edge.resize(n);
  for (int v = 0; v < n; ++v) {
    const auto begin = rc.search_edge.begin() + rc.first_edge[v];
    const auto end = rc.search_edge.begin() + rc.first_edge[v + 1];
    std::iota(begin, end, rc.first_edge[v]);
    std::stable_sort(begin, end,
                     [&](int a, int b) { return rc.node[rc.head[a]] < rc.node[rc.head[b]]; });
    rc.first_server_edge[v] = static_cast<int>(
        std::partition_point(begin, end, [&](int e) { return rc.node[rc.head[e]] < 0; }) -
        rc.search_edge.begin());
  }
}

// Dijkstra from `s` over the fabric and the servers `nodes` names (GPUs other
// than s do not forward), into route_cache_->dist; stops once `t` is settled, when
// every vertex on a cheapest path to t is settled too. Resets only the
// entries the previous search touched. Returns whether t was reached.
bool Cluster::Search(int s, int t, std::pair<int, int> nodes) const {
  RouteCache& rc = *route_cache_;
  std::vector<int64_t>& dist = rc.dist;
  std::vector<int>& touched = rc.touched;
  if (dist.empty()) dist.assign(vertices_.size(), kUnreachedCost);
  for (int v : touched) dist[v] = kUnreachedCost;
  touched.clear();
  using Entry = std::pair<int64_t, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  const auto relax = [&](int e, int64_t d) {
    const int w = rc.head[e];
    const int64_t nd = d + rc.cost[e];
    if (nd < dist[w]) {
      if (dist[w] == kUnreachedCost) touched.push_back(w);
      dist[w] = nd;
      heap.push({nd, w});
    }
  };
  const bool confined = nodes.first >= 0;
  dist[s] = 0;
  touched.push_back(s);
  heap.push({0, s});
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d != dist[v]) continue;
    if (v == t) return true;
    if (v != s && rc.is_gpu[v]) continue;
    const int begin = rc.first_edge[v];
    const int split = rc.first_server_edge[v];
    const int end = rc.first_edge[v + 1];
    for (int i = begin; i < split; ++i) relax(rc.search_edge[i], d);
    if (!confined) {
      for (int i = split; i < end; ++i) relax(rc.search_edge[i], d);
      continue;
    }
    // Server edges are sorted by server: relax the runs into the two allowed.
    for (int node : {nodes.first, nodes.second}) {
      if (node == nodes.second && nodes.first == nodes.second) break;
      const auto first = std::partition_point(
          rc.search_edge.begin() + split, rc.search_edge.begin() + end,
          [&](int e) { return rc.node[rc.head[e]] < node; });
      for (auto it = first; it != rc.search_edge.begin() + end && rc.node[rc.head[*it]] == node;
           ++it) {
        relax(*it, d);
      }
    }
  }
  return false;
}

std::vector<int> Cluster::ComputeRoute(int src, int dst) const {
  const int s = GpuVertex(src);
  const int t = GpuVertex(dst);
  if (s == t) return {};
  const int src_node = vertices_[s].node;
  const int dst_node = vertices_[t].node;
  // Servers do not forward traffic between two others: a route stays inside
  // the source's and destination's servers and the fabric. Only a cluster
  // whose servers are chained without switches needs the unconfined search.
  const RouteCache& rc = *route_cache_;
  const std::vector<int64_t>& dist = rc.dist;
  if (!Search(s, t, {src_node, dst_node})) {
    SIM_CHECK(Search(s, t, {-1, -1}))
        << "GPU " << dst << " unreachable from GPU " << src << " in a validated cluster";
  }
  // Walk back from t; at each hop choose among equal-cost predecessors by a
  // stable hash of (src, dst, hop). Candidates are in CSR (sorted) order.
  std::vector<int> path;
  int v = t;
  std::vector<int> candidates;
  for (int hop = 0; v != s; ++hop) {
    candidates.clear();
    for (int e = rc.first_edge[v]; e < rc.first_edge[v + 1]; ++e) {
      const int u = rc.head[e];
      if (dist[u] == kUnreachedCost) continue;
      if (u != s && rc.is_gpu[u]) continue;
      const int in = rc.reverse[e];
      if (dist[u] + rc.cost[in] == dist[v]) candidates.push_back(in);
    }
    SIM_CHECK(!candidates.empty()) << "broken shortest-path labels at " << vertices_[v].name;
    const uint64_t key = (static_cast<uint64_t>(src) << 40) ^ (static_cast<uint64_t>(dst) << 16) ^
                         static_cast<uint64_t>(hop);
    const int chosen = candidates[sim::StableHash(key) % candidates.size()];
    path.push_back(chosen);
    v = links_[chosen].src;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace clustersim::topology
