#include "topology/cluster_builder.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::topology {

int ClusterBuilder::AddVertex(VertexKind kind, int node, std::string name) {
  vertices_.push_back(Vertex{kind, node, std::move(name)});
  return static_cast<int>(vertices_.size()) - 1;
}

void ClusterBuilder::AddLink(int a, int b, const LinkTechnology& tech) {
  AddLink(a, b, tech.kind, tech.name, tech.bandwidth, tech.bandwidth, tech.latency);
}

void ClusterBuilder::AddLink(int a, int b, LinkKind kind, std::string_view technology,
                             sim::Bandwidth a_to_b, sim::Bandwidth b_to_a,
                             sim::Duration latency) {
  links_.push_back(PendingLink{a, b, kind, technology, a_to_b, b_to_a, latency});
}

void ClusterBuilder::SetNodePreset(std::string name, std::string description,
                                   bool nvls_capable) {
  node_preset_ = std::move(name);
  description_ = std::move(description);
  nvls_capable_ = nvls_capable;
}

absl::StatusOr<Cluster> ClusterBuilder::Build() && {
  const int n = static_cast<int>(vertices_.size());
  auto name_of = [&](int v) -> std::string {
    return (v >= 0 && v < n) ? vertices_[v].name : absl::StrCat("#", v);
  };
  // Validate links.
  for (const PendingLink& l : links_) {
    if (l.a < 0 || l.a >= n || l.b < 0 || l.b >= n || l.a == l.b) {
      return absl::InvalidArgumentError(
          absl::StrCat("link ", name_of(l.a), " <-> ", name_of(l.b),
                       " must join two different existing vertices"));
    }
    if (l.a_to_b.bits_per_second() <= 0 || l.b_to_a.bits_per_second() <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("link ", name_of(l.a), " <-> ", name_of(l.b), " (", std::string(l.technology),
                       ") has zero bandwidth in one direction; give both directions a "
                       "bandwidth > 0 or remove the link"));
    }
    if (l.latency < sim::Duration::Zero()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "link ", name_of(l.a), " <-> ", name_of(l.b), " has a negative latency"));
    }
  }
  Cluster c;
  c.vertices_ = std::move(vertices_);
  for (int v = 0; v < n; ++v) {
    if (c.vertices_[v].kind == VertexKind::kGpu) {
      c.gpu_vertex_.push_back(v);
      c.gpu_node_.push_back(c.vertices_[v].node);
    }
  }
  if (c.gpu_vertex_.empty()) {
    return absl::InvalidArgumentError("cluster has no GPU vertex; add at least one GPU");
  }
  // Directed edges sorted by (src, dst, insertion): the CSR edge order.
  struct Directed {
    int src, dst;
    LinkKind kind;
    std::string_view technology;
    sim::Bandwidth bw;
    sim::Duration latency;
    int pair;  // index of the link pair, to find the reverse
  };
  std::vector<Directed> edges;
  edges.reserve(links_.size() * 2);
  for (int i = 0; i < static_cast<int>(links_.size()); ++i) {
    const PendingLink& l = links_[i];
    edges.push_back({l.a, l.b, l.kind, l.technology, l.a_to_b, l.latency, i});
    edges.push_back({l.b, l.a, l.kind, l.technology, l.b_to_a, l.latency, i});
  }
  std::stable_sort(edges.begin(), edges.end(), [](const Directed& x, const Directed& y) {
    return std::pair(x.src, x.dst) < std::pair(y.src, y.dst);
  });
  std::vector<std::pair<int, int>> ends(links_.size(), {-1, -1});
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(edges.size());
  c.links_.reserve(edges.size());
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    const Directed& d = edges[e];
    pairs.emplace_back(d.src, d.dst);
    c.links_.push_back(Link{d.src, d.dst, d.kind, d.technology, d.bw, d.latency, -1});
    auto& slot = ends[d.pair];
    (slot.first < 0 ? slot.first : slot.second) = e;
  }
  for (const auto& [x, y] : ends) {
    c.links_[x].reverse = y;
    c.links_[y].reverse = x;
  }
  c.graph_ = Cluster::Graph(boost::edges_are_sorted, pairs.begin(), pairs.end(),
                            static_cast<Cluster::Graph::vertices_size_type>(n));
  // Every GPU must reach GPU 0 without transiting another GPU; links are
  // symmetric, so this makes every pair reachable.
  std::vector<bool> seen(n, false);
  std::deque<int> frontier = {c.gpu_vertex_[0]};
  seen[c.gpu_vertex_[0]] = true;
  while (!frontier.empty()) {
    const int v = frontier.front();
    frontier.pop_front();
    if (c.vertices_[v].kind == VertexKind::kGpu && v != c.gpu_vertex_[0]) continue;
    for (auto e : c.OutEdges(v)) {
      const int w = static_cast<int>(boost::target(e, c.graph_));
      if (!seen[w]) {
        seen[w] = true;
        frontier.push_back(w);
      }
    }
  }
  for (int g = 0; g < c.num_gpus(); ++g) {
    if (!seen[c.gpu_vertex_[g]]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GPU ", g, " (", c.vertices_[c.gpu_vertex_[g]].name, ") cannot reach GPU 0 (",
          c.vertices_[c.gpu_vertex_[0]].name,
          "); connect it to a switch, NVSwitch or PCIe switch of the cluster"));
    }
  }
  int max_node = -1;
  for (int node : c.gpu_node_) max_node = std::max(max_node, node);
  c.num_nodes_ = max_node + 1;
  std::vector<int> per_node(c.num_nodes_, 0);
  for (int node : c.gpu_node_) {
    if (node < 0) {
      return absl::InvalidArgumentError("every GPU vertex needs a node index >= 0");
    }
    ++per_node[node];
  }
  c.gpus_per_node_ = *std::max_element(per_node.begin(), per_node.end());
  c.node_preset_ = std::move(node_preset_);
  c.description_ = std::move(description_);
  c.nvls_capable_ = nvls_capable_;
  return c;
}

}  // namespace clustersim::topology
