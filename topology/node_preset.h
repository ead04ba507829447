// File: topology/node_preset.h
//
// The server ("node") presets a cluster is built from, as immutable data with a
// source per row: topology/data/nodes.textproto (schema topology/proto/network.proto),
// embedded in the binary and parsed once at first use. Names:
//   dgx-a100         8x A100 SXM, NVLink3 via NVSwitch, PCIe4, 8x IB HDR 200G
//   dgx-h100         8x H100 SXM, NVLink4 via NVSwitch (NVLS), PCIe5, 8x IB NDR 400G
//   dgx-h200         8x H200 SXM, as dgx-h100
//   hgx-b200         8x B200 SXM, NVLink5 via NVSwitch (NVLS), PCIe5, 8x 400G (NDR)
//   pcie-rtx4090-8x  8x RTX 4090, no NVLink, PCIe4 switches under one host bridge, 1x 100GbE
//   pcie-a10g-8x     8x A10G (AWS g5.48xlarge-like), PCIe4, 1x 100GbE
//   pcie-l40s-8x     8x L40S (AWS g6e.48xlarge-like), PCIe4, 4x 100GbE
//   Single-device hosts for serving: pcie-a100-1x, pcie-h100-1x,
//   pcie-l40s-1x, pcie-a10g-1x, pcie-a10-1x, workstation-rtx-a6000-1x,
//   workstation-rtx4090-1x/-2x and
//   workstation-rtx3090-1x/-2x (PCIe through the CPU, no NVLink), jetson-agx-orin,
//   mac-studio-m2-ultra, cpu-server-xeon-8480plus (one device per host).
//
// Inside a node, GPUs are split evenly over `pcie_switches` PCIe switches that
// hang off one host bridge; NIC i sits on switch i*pcie_switches/nics. An
// NVSwitch node has one aggregated NVSwitch vertex whose link to each GPU carries
// the GPU's whole NVLink bandwidth.
//
// Example:
//   absl::StatusOr<const NodePreset*> p = FindNodePreset("dgx-h100");
//   int gpus = (*p)->gpus_per_node;  // 8
#ifndef CLUSTERSIM_TOPOLOGY_NODE_PRESET_H_
#define CLUSTERSIM_TOPOLOGY_NODE_PRESET_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::topology {

struct NodePreset {
  std::string_view name;
  std::string_view gpu;          // GPU name as in models/gpu_catalog
  int gpus_per_node;
  std::string_view gpu_link;     // NVLink technology through an NVSwitch; "" when none
  bool nvls;                     // NVSwitch supports in-network reduction (NVLink SHARP)
  std::string_view pcie;         // PCIe technology of GPU, NIC and switch uplinks
  int pcie_switches;             // GPUs and NICs are spread evenly over these
  int nics;                      // scale-out NICs per node
  std::string_view nic_link;     // default NIC technology
  std::string_view host_link;    // GPU to host-memory link; "" = the pcie link
  std::string_view description;  // short, for Cluster::Describe
  std::string_view source;
};

// All presets in a fixed order (the order of nodes.textproto).
const std::vector<NodePreset>& NodePresets();

// Names of all presets, in the order of NodePresets().
std::vector<std::string> NodePresetNames();

// Returns the preset called `name`, or NotFound listing the valid names.
absl::StatusOr<const NodePreset*> FindNodePreset(std::string_view name);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_NODE_PRESET_H_
