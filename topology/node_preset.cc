#include "topology/node_preset.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustersim::topology {
namespace {

std::vector<NodePreset> MakeTable() {
  return {
      {"dgx-a100", "A100-SXM4-80GB", 8, "nvlink3", false, "pcie4-x16", 8, 8, "ib-hdr",
       "NVLink3 via NVSwitch",
       "hardware-and-prices.md §1: NVLink3 300 GB/s uni, no SHARP on A100 (§3 [MLE-net]); "
       "8x HDR 200G per node (Selene, unverified); modelled as one PCIe4 switch per GPU/NIC "
       "pair (the real board shares 4 switches, 2 GPUs + 2 NICs each [memory]) so that each "
       "GPU uses its own NIC, as NCCL does"},
      {"dgx-h100", "H100-SXM5-80GB", 8, "nvlink4", true, "pcie5-x16", 8, 8, "ib-ndr",
       "NVLink4 via NVSwitch, NVLS",
       "hardware-and-prices.md §1: NVLink4 450 GB/s uni, NVSwitch 450 GB/s reduction bandwidth "
       "[MLE-net]; NDR 400G CX-7 per GPU [NCCL-290]; one PCIe5 switch per GPU/NIC pair (assumption)"},
      {"dgx-h200", "H200-SXM-141GB", 8, "nvlink4", true, "pcie5-x16", 8, 8, "ib-ndr",
       "NVLink4 via NVSwitch, NVLS",
       "hardware-and-prices.md §1: H200 NVLink4 450/900 [MLE-acc]; §3 NVLS rows [MLE-net]; "
       "NICs as DGX H100 [memory]"},
      {"hgx-b200", "B200-SXM", 8, "nvlink5", true, "pcie5-x16", 8, 8, "ib-ndr",
       "NVLink5 via NVSwitch, NVLS",
       "hardware-and-prices.md §1: NVLink5 900 GB/s uni [MLE-net]; 8x 400G per node "
       "(AWS P6-B200: 8x EFA v4 50 GB/s per GPU)"},
      {"pcie-rtx4090-8x", "RTX-4090", 8, "", false, "pcie4-x16", 2, 1, "roce-100g",
       "PCIe4 switches, no NVLink",
       "hardware-and-prices.md §1: RTX 4090 has no NVLink, PCIe 4.0 x16 [WAREDB-4090]; "
       "2 PCIe switches x 4 GPUs and one 100GbE NIC: a typical 4U 8-GPU server (assumption)"},
      {"pcie-a10g-8x", "A10G", 8, "", false, "pcie4-x16", 2, 1, "roce-100g",
       "PCIe4 switches, no NVLink",
       "AWS g5.48xlarge: 8x A10G, 100 Gb/s networking, PCIe 4.0 ([memory], unverified); "
       "switch layout: assumption"},
      {"pcie-l40s-8x", "L40S", 8, "", false, "pcie4-x16", 2, 4, "roce-100g",
       "PCIe4 switches, no NVLink",
       "AWS g6e.48xlarge: 8x L40S, 400 Gb/s networking (4x 100G), PCIe 4.0 ([memory], "
       "unverified); switch layout: assumption"},
  };
}

}  // namespace

const std::vector<NodePreset>& NodePresets() {
  static const std::vector<NodePreset>* const kTable = new std::vector<NodePreset>(MakeTable());
  return *kTable;
}

std::vector<std::string> NodePresetNames() {
  std::vector<std::string> names;
  for (const NodePreset& p : NodePresets()) names.emplace_back(p.name);
  return names;
}

absl::StatusOr<const NodePreset*> FindNodePreset(std::string_view name) {
  for (const NodePreset& p : NodePresets()) {
    if (p.name == name) return &p;
  }
  return absl::NotFoundError(absl::StrCat("unknown node_preset '", std::string(name),
                                          "'; valid: ", absl::StrJoin(NodePresetNames(), ", ")));
}

}  // namespace clustersim::topology
