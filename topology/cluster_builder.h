// File: topology/cluster_builder.h
//
// The mutable half of Build -> validate -> seal. Add vertices and links, then
// Build() checks the graph and returns an immutable Cluster:
//   - every link names existing vertices and has bandwidth > 0 in both directions
//     and latency >= 0;
//   - there is at least one GPU, and every GPU reaches every other GPU without
//     passing through a third GPU.
// GPUs are numbered in the order they are added (global GPU index).
//
// Example:
//   ClusterBuilder b;
//   int sw = b.AddVertex(VertexKind::kNvSwitch, 0, "node0/nvswitch");
//   for (int i = 0; i < 2; ++i) {
//     int g = b.AddVertex(VertexKind::kGpu, 0, absl::StrCat("node0/gpu", i));
//     b.AddLink(g, sw, *FindLinkTechnology("nvlink4").value());
//   }
//   absl::StatusOr<Cluster> cluster = std::move(b).Build();
#ifndef CLUSTERSIM_TOPOLOGY_CLUSTER_BUILDER_H_
#define CLUSTERSIM_TOPOLOGY_CLUSTER_BUILDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/units.h"
#include "topology/cluster.h"
#include "topology/link_technology.h"

namespace clustersim::topology {

class ClusterBuilder {
 public:
  ClusterBuilder() = default;

  // Returns the new vertex id. `node` is the server index (-1 for fabric).
  int AddVertex(VertexKind kind, int node, std::string name);

  // A full-duplex link with the technology's bandwidth in each direction.
  void AddLink(int a, int b, const LinkTechnology& tech);
  // A full-duplex link with explicit per-direction figures; `technology` must
  // have static storage (a literal or a LinkTechnology name).
  void AddLink(int a, int b, LinkKind kind, std::string_view technology,
               sim::Bandwidth a_to_b, sim::Bandwidth b_to_a, sim::Duration latency);

  // Metadata reported by the sealed Cluster.
  void SetNodePreset(std::string name, std::string description, bool nvls_capable);

  // Validates and seals. The builder is consumed.
  absl::StatusOr<Cluster> Build() &&;

 private:
  struct PendingLink {
    int a, b;
    LinkKind kind;
    std::string_view technology;
    sim::Bandwidth a_to_b, b_to_a;
    sim::Duration latency;
  };
  std::vector<Vertex> vertices_;
  std::vector<PendingLink> links_;
  std::string node_preset_ = "custom";
  std::string description_ = "custom topology";
  bool nvls_capable_ = false;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_CLUSTER_BUILDER_H_
