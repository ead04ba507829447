// BuildCluster (declared in cluster.h): node presets and fabrics -> ClusterBuilder.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"
#include "topology/cluster.h"
#include "topology/cluster_builder.h"

namespace clustersim::topology {
namespace {

struct NodeVertices {
  std::vector<int> nics;
};

NodeVertices AddNode(ClusterBuilder& b, const NodePreset& preset, int node, int nics,
                     int pcie_switches, const LinkTechnology& pcie,
                     const LinkTechnology* nvlink) {
  const std::string prefix = absl::StrCat("node", node, "/");
  const int host = b.AddVertex(VertexKind::kHostBridge, node, prefix + "host");
  std::vector<int> switches;
  for (int s = 0; s < pcie_switches; ++s) {
    switches.push_back(b.AddVertex(VertexKind::kPcieSwitch, node, absl::StrCat(prefix, "pcie", s)));
    b.AddLink(switches.back(), host, pcie);
  }
  const int nvswitch =
      nvlink != nullptr ? b.AddVertex(VertexKind::kNvSwitch, node, prefix + "nvswitch") : -1;
  const int g_count = preset.gpus_per_node;
  for (int g = 0; g < g_count; ++g) {
    const int gpu = b.AddVertex(VertexKind::kGpu, node, absl::StrCat(prefix, "gpu", g));
    b.AddLink(gpu, switches[g * pcie_switches / g_count], pcie);
    if (nvswitch >= 0) b.AddLink(gpu, nvswitch, *nvlink);
  }
  NodeVertices out;
  for (int i = 0; i < nics; ++i) {
    out.nics.push_back(b.AddVertex(VertexKind::kNic, node, absl::StrCat(prefix, "nic", i)));
    b.AddLink(out.nics.back(), switches[i * pcie_switches / nics], pcie);
  }
  return out;
}

// Rail-optimised fat-tree; see cluster_spec.h for the shape.
void AddFatTree(ClusterBuilder& b, const FabricSpec& fabric, const LinkTechnology& port,
                const std::vector<NodeVertices>& nodes, int rails) {
  const int num_nodes = static_cast<int>(nodes.size());
  const int down = fabric.leaf_radix / 2;
  const int up = std::max(1, static_cast<int>(std::lround(down / fabric.oversubscription)));
  const int leaves_per_rail = (num_nodes + down - 1) / down;
  std::vector<int> leaves;  // rail-major
  for (int r = 0; r < rails; ++r) {
    for (int j = 0; j < leaves_per_rail; ++j) {
      const int leaf =
          b.AddVertex(VertexKind::kLeaf, -1, absl::StrCat("rail", r, "/leaf", j));
      leaves.push_back(leaf);
      for (int n = j * down; n < std::min(num_nodes, (j + 1) * down); ++n) {
        b.AddLink(nodes[n].nics[r], leaf, port);
      }
    }
  }
  if (fabric.tiers == 2) {
    for (int u = 0; u < up; ++u) {
      const int spine = b.AddVertex(VertexKind::kSpine, -1, absl::StrCat("spine", u));
      for (int leaf : leaves) b.AddLink(leaf, spine, port);
    }
    return;
  }
  // Three tiers: pods of `down` leaves with `up` spines each; every spine links
  // to all `down` core switches.
  std::vector<int> cores;
  for (int c = 0; c < down; ++c) {
    cores.push_back(b.AddVertex(VertexKind::kCore, -1, absl::StrCat("core", c)));
  }
  const int pods = (static_cast<int>(leaves.size()) + down - 1) / down;
  for (int p = 0; p < pods; ++p) {
    for (int u = 0; u < up; ++u) {
      const int spine =
          b.AddVertex(VertexKind::kSpine, -1, absl::StrCat("pod", p, "/spine", u));
      const int end = std::min(static_cast<int>(leaves.size()), (p + 1) * down);
      for (int i = p * down; i < end; ++i) b.AddLink(leaves[i], spine, port);
      for (int core : cores) b.AddLink(spine, core, port);
    }
  }
}

absl::Status ValidateFabric(const FabricSpec& f) {
  if (f.kind != "single-switch" && f.kind != "fat-tree") {
    return absl::InvalidArgumentError(absl::StrCat(
        "fabric.kind '", f.kind, "' is unknown; valid: single-switch, fat-tree"));
  }
  if (f.kind == "fat-tree" && f.tiers != 2 && f.tiers != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("fabric.tiers=", f.tiers, " is unsupported; use 2 or 3"));
  }
  if (!(f.oversubscription >= 1.0) || !std::isfinite(f.oversubscription)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fabric.oversubscription=", f.oversubscription,
                     " must be >= 1 (1.0 is non-blocking, 2.0 is 2:1)"));
  }
  if (f.leaf_radix < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("fabric.leaf_radix=", f.leaf_radix, " must be >= 2 (e.g. 64)"));
  }
  return absl::OkStatus();
}

// A preset-shaped view of a custom node; string_views point into `c`.
absl::StatusOr<NodePreset> CustomPreset(const CustomNodeSpec& c) {
  if (c.gpus_per_node < 1 || c.gpus_per_node > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.custom_node.gpus_per_node=", c.gpus_per_node, " must be between 1 and 1024"));
  }
  if (c.pcie_switches < 1 || c.pcie_switches > c.gpus_per_node) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.custom_node.pcie_switches=", c.pcie_switches, " must be between 1 and gpus_per_node=",
        c.gpus_per_node));
  }
  if (c.nics < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.custom_node.nics=", c.nics, " must be at least 1"));
  }
  if (c.nvls && c.gpu_link.empty()) {
    return absl::InvalidArgumentError(
        "cluster.custom_node.nvls needs an NVSwitch: set gpu_link (e.g. nvlink4)");
  }
  for (const std::string* tech : {&c.gpu_link, &c.pcie, &c.nic_link, &c.host_link}) {
    if (tech->empty()) continue;
    if (absl::StatusOr<const LinkTechnology*> t = FindLinkTechnology(*tech); !t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cluster.custom_node: ", std::string(t.status().message())));
    }
  }
  return NodePreset{"custom", "", c.gpus_per_node, c.gpu_link, c.nvls, c.pcie, c.pcie_switches,
                    c.nics, c.nic_link, c.host_link, "custom node", "scenario"};
}

}  // namespace

absl::StatusOr<Cluster> BuildCluster(const ClusterSpec& spec) {
  NodePreset custom;
  const NodePreset* preset_ptr = nullptr;
  if (spec.custom_node) {
    absl::StatusOr<NodePreset> c = CustomPreset(*spec.custom_node);
    if (!c.ok()) return c.status();
    custom = *c;
    preset_ptr = &custom;
  } else {
    absl::StatusOr<const NodePreset*> preset = FindNodePreset(spec.node_preset);
    if (!preset.ok()) return preset.status();
    preset_ptr = *preset;
  }
  const NodePreset& p = *preset_ptr;
  if (spec.num_nodes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_nodes=", spec.num_nodes, " must be >= 1"));
  }
  if (spec.nics_per_node < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nics_per_node=", spec.nics_per_node, " must be >= 0 (0 = the preset's ", p.nics, ")"));
  }
  CLUSTERSIM_RETURN_IF_ERROR(ValidateFabric(spec.fabric));
  const std::string_view port_name = spec.fabric.link.empty() ? p.nic_link : spec.fabric.link;
  absl::StatusOr<const LinkTechnology*> port = FindLinkTechnology(port_name);
  if (!port.ok()) {
    return absl::Status(port.status().code(),
                        absl::StrCat("fabric.link: ", std::string(port.status().message())));
  }
  if ((*port)->kind != LinkKind::kInfiniband && (*port)->kind != LinkKind::kEthernet) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fabric.link '", std::string(port_name), "' is not a network technology; use ib-* or roce-*"));
  }
  absl::StatusOr<const LinkTechnology*> pcie = FindLinkTechnology(p.pcie);
  if (!pcie.ok()) return pcie.status();
  const LinkTechnology* nvlink = nullptr;
  if (!p.gpu_link.empty()) {
    absl::StatusOr<const LinkTechnology*> nv = FindLinkTechnology(p.gpu_link);
    if (!nv.ok()) return nv.status();
    nvlink = *nv;
  }
  const int nics = spec.nics_per_node > 0 ? spec.nics_per_node : p.nics;
  // An overridden NIC count that divides the GPU count regroups the node as one
  // PCIe switch per NIC (4 NICs -> 4 switches x 2 GPUs, the DGX A100 board), so
  // every GPU keeps a NIC on its own switch.
  const int pcie_switches = spec.nics_per_node > 0 && p.gpus_per_node % nics == 0 &&
                                    nics <= p.gpus_per_node
                                ? nics
                                : p.pcie_switches;

  ClusterBuilder b;
  std::vector<NodeVertices> nodes;
  nodes.reserve(spec.num_nodes);
  for (int n = 0; n < spec.num_nodes; ++n) {
    nodes.push_back(AddNode(b, p, n, nics, pcie_switches, **pcie, nvlink));
  }
  std::string description(p.description);
  if (spec.num_nodes > 1) {
    if (spec.fabric.kind == "single-switch") {
      const int sw = b.AddVertex(VertexKind::kLeaf, -1, "switch");
      for (const NodeVertices& node : nodes) {
        for (int nic : node.nics) b.AddLink(nic, sw, **port);
      }
      absl::StrAppend(&description, "; single-switch, ", nics, "x ", std::string(port_name), " per node");
    } else {
      AddFatTree(b, spec.fabric, **port, nodes, nics);
      absl::StrAppend(&description, "; rail-optimised ", spec.fabric.tiers, "-tier fat-tree ",
                      spec.fabric.oversubscription, ":1, ", nics, "x ", std::string(port_name), " per node");
    }
  }
  b.SetNodePreset(std::string(p.name), description, p.nvls);
  return std::move(b).Build();
}

}  // namespace clustersim::topology
