#include "topology/link_technology.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustersim::topology {
namespace {

using sim::Bandwidth;
using sim::Nanoseconds;

// Per-hop latencies are physical port/wire figures used for routes; the
// collective step latencies that software adds live in collective_calibration.cc.
std::vector<LinkTechnology> MakeTable() {
  return {
      // NVLink: the aggregate of all links of one GPU, per direction.
      {"nvlink3", LinkKind::kNvlink, Bandwidth::GigabytesPerSecond(300), Nanoseconds(100),
       "hardware-and-prices.md §1 [MLE-net]: 12 links x 25 GB/s = 300 GB/s uni (A100); "
       "latency: assumption (~100 ns per NVSwitch hop)"},
      {"nvlink4", LinkKind::kNvlink, Bandwidth::GigabytesPerSecond(450), Nanoseconds(100),
       "hardware-and-prices.md §1 [MLE-net]: 18 links x 25 GB/s = 450 GB/s uni (H100/H200); "
       "latency: assumption"},
      {"nvlink5", LinkKind::kNvlink, Bandwidth::GigabytesPerSecond(900), Nanoseconds(100),
       "hardware-and-prices.md §1 [MLE-net]: 18 links x 50 GB/s = 900 GB/s uni (B200); "
       "latency: assumption"},
      // PCIe x16 per direction after 128b/130b encoding (gen3 8 GT/s, gen4 16, gen5 32).
      {"pcie3-x16", LinkKind::kPcie, Bandwidth::GigabytesPerSecond(15.75), Nanoseconds(250),
       "PCI-SIG PCIe 3.0 base spec: 8 GT/s x 16 lanes x 128/130; latency: assumption"},
      {"pcie4-x16", LinkKind::kPcie, Bandwidth::GigabytesPerSecond(31.5), Nanoseconds(250),
       "PCI-SIG PCIe 4.0: 16 GT/s x 16 x 128/130 (hardware-and-prices.md §1: RTX 4090 "
       "PCIe 4.0 x16); latency: assumption"},
      {"pcie5-x16", LinkKind::kPcie, Bandwidth::GigabytesPerSecond(63), Nanoseconds(250),
       "hardware-and-prices.md §3 [MLE-net]: PCIe5 x16 = 63 GB/s (H200 nvbandwidth row); "
       "latency: assumption"},
      // InfiniBand: per port line rate.
      {"ib-hdr", LinkKind::kInfiniband, Bandwidth::Gbps(200), Nanoseconds(300),
       "HDR 200 Gb/s (hardware-and-prices.md §3 [NCCL-119]: 4x HDR = 100 GB/s theoretical); "
       "latency: assumption (~130 ns switch + NIC)"},
      {"ib-ndr", LinkKind::kInfiniband, Bandwidth::Gbps(400), Nanoseconds(300),
       "hardware-and-prices.md §1: NDR 400 Gb/s = 50 GB/s per NIC (CX-7); latency: assumption"},
      {"ib-xdr", LinkKind::kInfiniband, Bandwidth::Gbps(800), Nanoseconds(300),
       "InfiniBand XDR 800 Gb/s (IBTA roadmap, [memory], unverified); latency: assumption"},
      // Ethernet / RoCE: per port line rate.
      {"roce-100g", LinkKind::kEthernet, Bandwidth::Gbps(100), Nanoseconds(600),
       "IEEE 802.3 100GbE line rate; latency: assumption (~600 ns per hop)"},
      {"roce-200g", LinkKind::kEthernet, Bandwidth::Gbps(200), Nanoseconds(600),
       "IEEE 802.3 200GbE line rate; latency: assumption"},
      {"roce-400g", LinkKind::kEthernet, Bandwidth::Gbps(400), Nanoseconds(600),
       "IEEE 802.3 400GbE line rate (AWS P6-B200 EFA v4: 50 GB/s per GPU, "
       "hardware-and-prices.md §1); latency: assumption"},
  };
}

}  // namespace

std::string_view LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kInfiniband:
      return "infiniband";
    case LinkKind::kEthernet:
      return "ethernet";
  }
  return "unknown";
}

const std::vector<LinkTechnology>& LinkTechnologies() {
  static const std::vector<LinkTechnology>* const kTable =
      new std::vector<LinkTechnology>(MakeTable());
  return *kTable;
}

absl::StatusOr<const LinkTechnology*> FindLinkTechnology(std::string_view name) {
  std::vector<std::string> names;
  for (const LinkTechnology& tech : LinkTechnologies()) {
    if (tech.name == name) return &tech;
    names.emplace_back(tech.name);
  }
  return absl::NotFoundError(absl::StrCat("unknown link technology '", std::string(name),
                                          "'; valid: ", absl::StrJoin(names, ", ")));
}

}  // namespace clustersim::topology
