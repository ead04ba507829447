#include "scenarios/input/resolve_cluster.h"

#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/power_model.h"
#include "sim/status_macros.h"
#include "topology/link_technology.h"
#include "topology/node_preset.h"

namespace clustersim::scenarios {
namespace {

absl::Status WithField(const absl::Status& s, std::string_view field) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(std::string(field), ": ", s.message()));
}

// Prefix -> node preset. First match wins; see topology's preset list.
struct NodeRule {
  std::string_view gpu_prefix;
  std::string_view node;
};
constexpr NodeRule kNodeRules[] = {
    {"a100-sxm4", "dgx-a100"},
    {"h100-sxm5", "dgx-h100"},
    {"h200-sxm", "dgx-h200"},
    {"b200", "hgx-b200"},
    {"gb200", "gb200-nvl72"},
    {"rtx-4090", "pcie-rtx4090-8x"},
    {"l40s", "pcie-l40s-8x"},
    {"a10g", "pcie-a10g-8x"},
    // Single-device hosts (serving).
    {"a100-pcie", "pcie-a100-1x"},
    {"h100-pcie", "pcie-h100-1x"},
    {"rtx-3090", "workstation-rtx3090-1x"},
    {"rtx-a6000", "workstation-rtx-a6000-1x"},
    {"a10-pcie", "pcie-a10-1x"},
    {"jetson-agx-orin", "jetson-agx-orin"},
    {"apple-m2-ultra", "mac-studio-m2-ultra"},
    {"xeon-platinum-8480plus", "cpu-server-xeon-8480plus"},
};

}  // namespace

absl::StatusOr<std::string> DefaultNodeFor(const models::GpuSpec& gpu) {
  for (const NodeRule& r : kNodeRules) {
    if (absl::StartsWith(gpu.name, std::string(r.gpu_prefix))) return std::string(r.node);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "cluster.node is required for GPU ", gpu.name,
      " (no default server for it); set it to a preset (`clustersim list clusters`)"));
}

absl::StatusOr<ResolvedCluster> ResolveCluster(const config::ClusterConfig& c) {
  ResolvedCluster out;
  if (!c.has_gpu()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.gpu is required; use one of: ",
        absl::StrJoin(models::GpuCatalog::Default().Names(), ", ")));
  }
  absl::StatusOr<const models::GpuSpec*> gpu = models::GpuCatalog::Default().Find(c.gpu());
  if (!gpu.ok()) return WithField(gpu.status(), "cluster.gpu");
  out.gpu = *gpu;
  if (c.has_custom_node()) {
    if (c.has_node()) {
      return absl::InvalidArgumentError(
          "cluster.node and cluster.custom_node are both set; keep one");
    }
    const config::CustomNodeConfig& n = c.custom_node();
    topology::CustomNodeSpec node;
    if (n.has_gpus_per_node()) node.gpus_per_node = n.gpus_per_node();
    if (n.has_gpu_link()) node.gpu_link = n.gpu_link();
    node.nvls = n.nvls();
    if (n.has_pcie()) node.pcie = n.pcie();
    if (n.has_pcie_switches()) node.pcie_switches = n.pcie_switches();
    if (n.has_nics()) node.nics = n.nics();
    if (n.has_nic_link()) node.nic_link = n.nic_link();
    if (n.has_host_link()) node.host_link = n.host_link();
    absl::StatusOr<const topology::LinkTechnology*> link =
        topology::FindLinkTechnology(node.host_link.empty() ? node.pcie : node.host_link);
    // An unknown PCIe link is reported by BuildCluster with the node's other links.
    if (link.ok()) {
      out.host_link = *link;
    } else if (!node.host_link.empty()) {
      return WithField(link.status(), "cluster.custom_node.host_link");
    }
    out.spec.custom_node = node;
    out.spec.node_preset = "custom";
    out.gpus_per_node = node.gpus_per_node;
  } else {
    if (c.has_node()) {
      out.spec.node_preset = c.node();
    } else {
      absl::StatusOr<std::string> node = DefaultNodeFor(*out.gpu);
      if (!node.ok()) return node.status();
      out.spec.node_preset = *node;
    }
    absl::StatusOr<const topology::NodePreset*> preset =
        topology::FindNodePreset(out.spec.node_preset);
    if (preset.ok()) {
      // Preset links are checked when the catalog loads.
      absl::StatusOr<const topology::LinkTechnology*> link = topology::FindLinkTechnology(
          (*preset)->host_link.empty() ? (*preset)->pcie : (*preset)->host_link);
      if (link.ok()) out.host_link = *link;
    }
    if (c.has_gpus_per_node()) {
      out.gpus_per_node = c.gpus_per_node();
    } else {
      // The preset's own count (1 for a Mac Studio or a single-GPU host).
      if (!preset.ok()) return WithField(preset.status(), "cluster.node");
      out.gpus_per_node = (*preset)->gpus_per_node;
    }
  }
  if (out.spec.custom_node && c.has_gpus_per_node() &&
      c.gpus_per_node() != out.gpus_per_node) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.gpus_per_node=", c.gpus_per_node(), " disagrees with cluster.custom_node.gpus_per_node=",
        out.gpus_per_node, "; set only the latter"));
  }
  if (out.gpus_per_node < 1) {
    return absl::InvalidArgumentError(absl::StrCat("cluster.gpus_per_node=", out.gpus_per_node,
                                                   " must be at least 1"));
  }
  out.num_gpus = c.has_num_gpus() ? c.num_gpus() : out.gpus_per_node;
  if (out.num_gpus < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.num_gpus=", out.num_gpus, " must be at least 1"));
  }
  out.spec.num_nodes = (out.num_gpus + out.gpus_per_node - 1) / out.gpus_per_node;
  if (c.has_power_cap_w()) {
    CLUSTERSIM_RETURN_IF_ERROR(
        models::PowerModel::Default().CheckCap(*out.gpu, c.power_cap_w(), "cluster.power_cap_w"));
    out.power_cap_w = c.power_cap_w();
  }
  const config::FabricConfig& f = c.fabric();
  if (f.has_kind()) out.spec.fabric.kind = f.kind();
  if (f.has_tiers()) out.spec.fabric.tiers = f.tiers();
  if (f.has_oversubscription()) out.spec.fabric.oversubscription = f.oversubscription();
  if (f.has_link()) out.spec.fabric.link = f.link();
  return out;
}

void EchoCluster(const ResolvedCluster& c, config::ClusterConfig* out) {
  out->set_gpu(c.gpu->name);
  out->set_num_gpus(c.num_gpus);
  out->set_gpus_per_node(c.gpus_per_node);
  if (c.power_cap_w > 0) out->set_power_cap_w(c.power_cap_w);
  if (c.spec.custom_node) {
    const topology::CustomNodeSpec& n = *c.spec.custom_node;
    config::CustomNodeConfig* e = out->mutable_custom_node();
    e->set_gpus_per_node(n.gpus_per_node);
    e->set_gpu_link(n.gpu_link);
    e->set_nvls(n.nvls);
    e->set_pcie(n.pcie);
    e->set_pcie_switches(n.pcie_switches);
    e->set_nics(n.nics);
    e->set_nic_link(n.nic_link);
    if (!n.host_link.empty()) e->set_host_link(n.host_link);
    out->clear_node();
  } else {
    out->set_node(c.spec.node_preset);
  }
  config::FabricConfig* ef = out->mutable_fabric();
  ef->set_kind(c.spec.fabric.kind);
  ef->set_tiers(c.spec.fabric.tiers);
  ef->set_oversubscription(c.spec.fabric.oversubscription);
  ef->set_link(c.spec.fabric.link);
}

}  // namespace clustersim::scenarios
