// File: topology/cluster_spec.h
//
// The user-facing description of a cluster: a node preset (see node_preset.h),
// how many nodes, and the scale-out fabric between them. BuildCluster
// (cluster.h) turns a spec into a sealed Cluster.
//
// Fabric kinds:
//   "single-switch"  every NIC of every node on one switch (no oversubscription).
//   "fat-tree"       rail-optimised fat-tree: NIC i of every node connects to a leaf of
//                    rail i; each leaf has `leaf_radix/2` node-facing ports and
//                    round(leaf_radix/2 / oversubscription) uplinks, one to each
//                    spine. tiers=2: leaves -> spines. tiers=3: leaves are grouped in
//                    pods of leaf_radix/2 leaves with their own spines, and every spine
//                    has the same number of uplinks to core switches (oversubscription
//                    applies at the leaf tier only).
//
// Example:
//   ClusterSpec spec;
//   spec.node_preset = "dgx-a100";
//   spec.num_nodes = 3;
//   spec.nics_per_node = 4;            // a 4x HDR variant
//   spec.fabric.kind = "single-switch";
#ifndef CLUSTERSIM_TOPOLOGY_CLUSTER_SPEC_H_
#define CLUSTERSIM_TOPOLOGY_CLUSTER_SPEC_H_

#include <optional>
#include <string>

namespace clustersim::topology {

struct FabricSpec {
  std::string kind = "fat-tree";  // "single-switch" | "fat-tree" (rail-optimised)
  int tiers = 2;                  // fat-tree only: 2 or 3
  double oversubscription = 1.0;  // leaf down:up bandwidth, 2:1 -> 2.0; >= 1
  // Link technology for NICs and switch ports (see link_technology.h), e.g. "ib-hdr",
  // "ib-ndr", "ib-xdr", "roce-100g", "roce-200g", "roce-400g". Empty: the preset's.
  std::string link = "";
  int leaf_radix = 64;  // ports per switch (e.g. 64 on a Quantum-2 NDR switch)
};

// A node that is not a preset, described field by field (names of link
// technologies as in link_technology.h).
struct CustomNodeSpec {
  int gpus_per_node = 8;
  std::string gpu_link;        // NVLink through an NVSwitch, e.g. "nvlink4"; "" = none
  bool nvls = false;           // NVSwitch in-network reduction
  std::string pcie = "pcie4-x16";
  int pcie_switches = 1;       // GPUs and NICs spread evenly over them
  int nics = 1;                // scale-out NICs per node
  std::string nic_link = "ib-hdr";
  std::string host_link;       // GPU to host-memory link; "" = the pcie link
};

struct ClusterSpec {
  std::string node_preset;  // a name from NodePresetNames(); ignored with custom_node
  // When set, nodes are built from this description instead of a preset.
  std::optional<CustomNodeSpec> custom_node;
  int num_nodes = 1;
  FabricSpec fabric;
  // 0: the preset's NIC count. An override that divides the GPU count also
  // regroups the node as one PCIe switch per NIC (GPUs spread evenly).
  int nics_per_node = 0;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_CLUSTER_SPEC_H_
