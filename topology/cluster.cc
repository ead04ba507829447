#include "topology/cluster.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
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
  if (inserted) it->second = ComputeRoute(src, dst);
  return it->second;
}

// Dijkstra from `s` over the vertices `allowed` admits (GPUs other than s do
// not forward), into route_cache_->dist; stops once `t` is settled, when
// every vertex on a cheapest path to t is settled too. Resets only the
// entries the previous search touched. Returns whether t was reached.
template <typename Allowed>
bool Cluster::Search(int s, int t, const Allowed& allowed) const {
  std::vector<int64_t>& dist = route_cache_->dist;
  std::vector<int>& touched = route_cache_->touched;
  if (dist.empty()) dist.assign(vertices_.size(), kUnreachedCost);
  for (int v : touched) dist[v] = kUnreachedCost;
  touched.clear();
  using Entry = std::pair<int64_t, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  dist[s] = 0;
  touched.push_back(s);
  heap.push({0, s});
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d != dist[v]) continue;
    if (v == t) return true;
    if (v != s && vertices_[v].kind == VertexKind::kGpu) continue;
    for (auto e : OutEdges(v)) {
      const int w = static_cast<int>(boost::target(e, graph_));
      if (!allowed(w)) continue;
      const int64_t nd = d + LinkCost(EdgeId(e));
      if (nd < dist[w]) {
        if (dist[w] == kUnreachedCost) touched.push_back(w);
        dist[w] = nd;
        heap.push({nd, w});
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
  std::vector<int64_t>& dist = route_cache_->dist;
  if (!Search(s, t, [&](int w) {
        const int node = vertices_[w].node;
        return node < 0 || node == src_node || node == dst_node;
      })) {
    SIM_CHECK(Search(s, t, [](int) { return true; }))
        << "GPU " << dst << " unreachable from GPU " << src << " in a validated cluster";
  }
  // Walk back from t; at each hop choose among equal-cost predecessors by a
  // stable hash of (src, dst, hop). Candidates are in CSR (sorted) order.
  std::vector<int> path;
  int v = t;
  std::vector<int> candidates;
  for (int hop = 0; v != s; ++hop) {
    candidates.clear();
    for (auto e : OutEdges(v)) {
      const int u = static_cast<int>(boost::target(e, graph_));
      if (dist[u] == kUnreachedCost) continue;
      if (u != s && vertices_[u].kind == VertexKind::kGpu) continue;
      const int in = links_[EdgeId(e)].reverse;
      if (dist[u] + LinkCost(in) == dist[v]) candidates.push_back(in);
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
