#include "topology/route_search.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>

#include "sim/check.h"
#include "sim/random.h"
#include "topology/cluster.h"

// Why the tables give the same routes as the Dijkstra search. The walk back
// from t keeps, at each vertex v of the route, the in-edges u -> v with
// label(u) + cost == label(v) (u reached, and not a GPU other than s). The
// search's labels are exact for every vertex on a cheapest s -> t path, and a
// tentative or missing label never passes that test falsely (it would make
// v cheaper than its exact label). Under the tables:
//   - switches get their exact cost: a cheapest path to a switch leaves the
//     source's server once and stays on switches, since going through a
//     server (either of the two) costs more than the switches' own distance
//     (checked, strictly);
//   - the destination's vertices get their exact cost, seeded at every entry;
//   - the source's vertices get their cost inside the server. That is exact
//     for the vertices of cheapest s -> t paths (they never come back in from
//     a switch), and where it exceeds the exact cost, neither label passes the
//     test (passing would mean a path through the server as cheap as the
//     switches' own);
//   - other servers' vertices stay unreached, as in the confined search.
// So every test the walk makes has the same outcome, and the routes are equal.

namespace clustersim::topology {

int64_t RouteSearch::LinkCost(const Cluster& cluster, int e) {
  // Time to move 1 MB over the link, in picoseconds, plus its latency: prefers
  // NVLink over PCIe between GPUs of one node; equal links give exact ties.
  const Link& l = cluster.link(e);
  return 8'000'000'000'000'000'000 / l.bandwidth.bits_per_second() + l.latency.picoseconds();
}

RouteSearch::RouteSearch(const Cluster& cluster, Method method) : method_(method) {
  // Edge ids are CSR indices: a vertex's out-edges are consecutive ids.
  const int n = cluster.num_vertices();
  const int m = cluster.num_links();
  first_edge_.assign(n + 1, 0);
  head_.resize(m);
  reverse_.resize(m);
  cost_.resize(m);
  for (int e = 0; e < m; ++e) {
    const Link& l = cluster.link(e);
    SIM_CHECK(e == 0 || cluster.link(e - 1).src <= l.src) << "edges out of CSR order at " << e;
    ++first_edge_[l.src + 1];
    head_[e] = l.dst;
    reverse_[e] = l.reverse;
    cost_[e] = LinkCost(cluster, e);
  }
  std::partial_sum(first_edge_.begin(), first_edge_.end(), first_edge_.begin());
  node_.resize(n);
  is_gpu_.resize(n);
  fabric_index_.assign(n, -1);
  for (int v = 0; v < n; ++v) {
    const Vertex& vx = cluster.vertex(v);
    node_[v] = vx.node;
    is_gpu_[v] = vx.kind == VertexKind::kGpu;
    if (vx.node < 0) {
      fabric_index_[v] = static_cast<int>(fabric_vertex_.size());
      fabric_vertex_.push_back(v);
    }
  }
  fabric_rows_.resize(fabric_vertex_.size());
  server_entries_.resize(cluster.num_nodes());
  server_exits_.resize(cluster.num_nodes());
  no_transit_.assign(cluster.num_nodes(), -1);
  search_edge_.resize(m);
  first_server_edge_.resize(n);
  for (int v = 0; v < n; ++v) {
    const auto begin = search_edge_.begin() + first_edge_[v];
    const auto end = search_edge_.begin() + first_edge_[v + 1];
    std::iota(begin, end, first_edge_[v]);
    std::stable_sort(begin, end, [&](int a, int b) { return node_[head_[a]] < node_[head_[b]]; });
    first_server_edge_[v] = static_cast<int>(
        std::partition_point(begin, end, [&](int e) { return node_[head_[e]] < 0; }) -
        search_edge_.begin());
    for (int e = first_edge_[v]; e < first_edge_[v + 1]; ++e) {
      const int w = head_[e];
      if (node_[v] < 0 && node_[w] >= 0) server_entries_[node_[w]].push_back(e);
      if (node_[v] >= 0 && node_[w] < 0) server_exits_[node_[v]].push_back(e);
    }
  }
  dist_.assign(n, kUnreached);
}

void RouteSearch::ResetLabels() {
  for (int v : touched_) dist_[v] = kUnreached;
  touched_.clear();
}

// Dijkstra from `s` over the fabric and the servers `nodes` names (GPUs other
// than s do not forward); stops once `t` is settled, when every vertex on a
// cheapest path to t is settled too.
bool RouteSearch::Search(int s, int t, std::pair<int, int> nodes) {
  ResetLabels();
  using Entry = std::pair<int64_t, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  const auto relax = [&](int e, int64_t d) {
    const int w = head_[e];
    const int64_t nd = d + cost_[e];
    if (nd < dist_[w]) {
      if (dist_[w] == kUnreached) touched_.push_back(w);
      dist_[w] = nd;
      heap.push({nd, w});
    }
  };
  const bool confined = nodes.first >= 0;
  dist_[s] = 0;
  touched_.push_back(s);
  heap.push({0, s});
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d != dist_[v]) continue;
    if (v == t) return true;
    if (v != s && is_gpu_[v]) continue;
    const int begin = first_edge_[v];
    const int split = first_server_edge_[v];
    const int end = first_edge_[v + 1];
    for (int i = begin; i < split; ++i) relax(search_edge_[i], d);
    if (!confined) {
      for (int i = split; i < end; ++i) relax(search_edge_[i], d);
      continue;
    }
    // Server edges are sorted by server: relax the runs into the two allowed.
    for (int node : {nodes.first, nodes.second}) {
      if (node == nodes.second && nodes.first == nodes.second) break;
      const auto first =
          std::partition_point(search_edge_.begin() + split, search_edge_.begin() + end,
                               [&](int e) { return node_[head_[e]] < node; });
      for (auto it = first; it != search_edge_.begin() + end && node_[head_[*it]] == node; ++it) {
        relax(*it, d);
      }
    }
  }
  return false;
}

void RouteSearch::SearchServer(int node, int source,
                               const std::vector<std::pair<int, int64_t>>& seeds) {
  using Entry = std::pair<int64_t, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  const auto label = [&](int w, int64_t d) {
    if (d >= dist_[w]) return;
    if (dist_[w] == kUnreached) touched_.push_back(w);
    dist_[w] = d;
    heap.push({d, w});
  };
  for (const auto& [v, d] : seeds) label(v, d);
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d != dist_[v]) continue;
    if (v != source && is_gpu_[v]) continue;
    for (int e = first_edge_[v]; e < first_edge_[v + 1]; ++e) {
      if (node_[head_[e]] == node) label(head_[e], d + cost_[e]);
    }
  }
}

const std::vector<int64_t>& RouteSearch::FabricRow(int sw) {
  std::vector<int64_t>& row = fabric_rows_[sw];
  if (!row.empty()) return row;
  row.assign(fabric_vertex_.size(), kUnreached);
  using Entry = std::pair<int64_t, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  row[sw] = 0;
  heap.push({0, sw});
  while (!heap.empty()) {
    const auto [d, f] = heap.top();
    heap.pop();
    if (d != row[f]) continue;
    const int v = fabric_vertex_[f];
    for (int i = first_edge_[v]; i < first_server_edge_[v]; ++i) {
      const int e = search_edge_[i];
      const int g = fabric_index_[head_[e]];
      const int64_t nd = d + cost_[e];
      if (nd < row[g]) {
        row[g] = nd;
        heap.push({nd, g});
      }
    }
  }
  return row;
}

bool RouteSearch::NoTransitThrough(int node) {
  if (no_transit_[node] >= 0) return no_transit_[node] == 1;
  bool ok = true;
  std::vector<std::pair<int, int64_t>> seed(1);
  for (int in : server_entries_[node]) {
    if (!ok) break;
    ResetLabels();
    seed[0] = {head_[in], cost_[in]};
    SearchServer(node, /*source=*/-1, seed);
    const std::vector<int64_t>& row = FabricRow(fabric_index_[head_[reverse_[in]]]);
    for (int out : server_exits_[node]) {
      const int x = head_[reverse_[out]];
      if (dist_[x] == kUnreached || is_gpu_[x]) continue;
      const int64_t through = dist_[x] + cost_[out];
      if (through <= row[fabric_index_[head_[out]]]) {
        ok = false;
        break;
      }
    }
  }
  ResetLabels();
  no_transit_[node] = ok ? 1 : 0;
  return ok;
}

bool RouteSearch::LabelFromTables(int s, int t) {
  const int a = node_[s];
  const int b = node_[t];
  if (!NoTransitThrough(a) || !NoTransitThrough(b)) return false;
  ResetLabels();
  SearchServer(a, s, {{s, 0}});
  exits_.clear();
  for (int out : server_exits_[a]) {
    const int x = head_[reverse_[out]];
    if (dist_[x] == kUnreached || (x != s && is_gpu_[x])) continue;
    exits_.push_back({fabric_index_[head_[out]], dist_[x] + cost_[out]});
  }
  // One exit per switch, at its cheapest cost.
  std::sort(exits_.begin(), exits_.end());
  exits_.erase(std::unique(exits_.begin(), exits_.end(),
                           [](const auto& x, const auto& y) { return x.first == y.first; }),
               exits_.end());
  for (const auto& [sw, cost] : exits_) FabricRow(sw);
  tables_ = true;
  std::vector<std::pair<int, int64_t>> seeds;
  for (int in : server_entries_[b]) {
    const int64_t at = Label(head_[reverse_[in]]);
    if (at != kUnreached) seeds.push_back({head_[in], at + cost_[in]});
  }
  SearchServer(b, /*source=*/-1, seeds);
  if (dist_[t] != kUnreached) return true;
  tables_ = false;
  return false;
}

int64_t RouteSearch::Label(int u) const {
  if (!tables_ || node_[u] >= 0) return dist_[u];
  const int f = fabric_index_[u];
  int64_t best = kUnreached;
  for (const auto& [sw, cost] : exits_) {
    const int64_t d = fabric_rows_[sw][f];
    if (d != kUnreached) best = std::min(best, cost + d);
  }
  return best;
}

std::vector<int> RouteSearch::Route(const Cluster& cluster, int src, int dst) {
  const int s = cluster.GpuVertex(src);
  const int t = cluster.GpuVertex(dst);
  if (s == t) return {};
  const int src_node = node_[s];
  const int dst_node = node_[t];
  tables_ = false;
  const bool tables = method_ != Method::kDijkstra && src_node >= 0 && dst_node >= 0 &&
                      src_node != dst_node && LabelFromTables(s, t);
  // Servers do not forward traffic between two others: a route stays inside
  // the source's and destination's servers and the fabric. Only a cluster
  // whose servers are chained without switches needs the unconfined search.
  if (!tables && !Search(s, t, {src_node, dst_node})) {
    SIM_CHECK(Search(s, t, {-1, -1}))
        << "GPU " << dst << " unreachable from GPU " << src << " in a validated cluster";
  }
  if (tables) ++tabled_routes_;
  // Walk back from t; at each hop choose among equal-cost predecessors by a
  // stable hash of (src, dst, hop). Candidates are in CSR (sorted) order.
  std::vector<int> path;
  int v = t;
  std::vector<int> candidates;
  for (int hop = 0; v != s; ++hop) {
    candidates.clear();
    const int64_t at = Label(v);
    for (int e = first_edge_[v]; e < first_edge_[v + 1]; ++e) {
      const int u = head_[e];
      if (u != s && is_gpu_[u]) continue;
      const int64_t from = Label(u);
      if (from == kUnreached) continue;
      const int in = reverse_[e];
      if (from + cost_[in] == at) candidates.push_back(in);
    }
    SIM_CHECK(!candidates.empty()) << "broken shortest-path labels at "
                                   << cluster.vertex(v).name;
    const uint64_t key = (static_cast<uint64_t>(src) << 40) ^ (static_cast<uint64_t>(dst) << 16) ^
                         static_cast<uint64_t>(hop);
    const int chosen = candidates[sim::StableHash(key) % candidates.size()];
    path.push_back(chosen);
    v = head_[reverse_[chosen]];
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace clustersim::topology
