#include "topology/cluster.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

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

const std::vector<int>& Cluster::Route(int src, int dst) const {
  std::lock_guard<std::mutex> lock(route_cache_->mu);
  auto [it, inserted] = route_cache_->routes.try_emplace({src, dst});
  if (inserted) {
    if (!route_cache_->search) route_cache_->search = std::make_unique<RouteSearch>(*this);
    it->second = route_cache_->search->Route(*this, src, dst);
  }
  return it->second;
}

}  // namespace clustersim::topology
