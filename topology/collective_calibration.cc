#include "topology/collective_calibration.h"

#include "sim/check.h"

namespace clustersim::topology {
namespace {

using sim::Nanoseconds;

// NCCL src/graph/tuning.cc at NVIDIA/nccl@b6475625 (ecosystem.md §3.2):
// baseLat and hwLat tables, in our own layout. Order: NVLink, PCIe, InfiniBand,
// Ethernet (both NCCL's NET row).
HopLatencies Hops(int nvlink_ns, int pcie_ns, int net_ns) {
  return {Nanoseconds(nvlink_ns), Nanoseconds(pcie_ns), Nanoseconds(net_ns), Nanoseconds(net_ns)};
}

// Measured rows (hardware-and-prices.md §3, [MLE-net] unless noted) and their role:
//   calibrated  8x A100 ring 234.89 GB/s and 8x H100 ring 370 GB/s -> NVLink efficiency
//               (mean of 234.89/300 = 0.783 and 370/450 = 0.822).
//   calibrated  8x H100 NVLS ~480 GB/s -> nvls_scale (with NCCL's Hopper efficiency 0.85).
//   calibrated  8x B200 32 KiB 1.2 GB/s -> call_overhead (the latency floor).
//   calibrated  8x B200 128 MiB 569 GB/s -> nvls_latency (the NVLS line through that
//               point; ring Simple predicts the same point within 1%).
//   predicted   8x H200 ring 367.61, 8x H200 NVLS 482.26, 8x B200 845.67 (NVLS with NCCL's
//               Blackwell efficiency 0.74), 3 nodes x 8 A100 with 4x HDR 84.8-96,
//               4 nodes x 8 B200 with 8x 400G 377-382, B200 1 MiB 36 and 16 MiB 255
//               (protocol choice with NCCL's own latencies).
CollectiveCalibration MakeDefault() {
  CollectiveCalibration c;
  c.links = {
      {LinkKind::kNvlink, 0.80,
       "calibrated on 8x A100 (234.89) and 8x H100 ring (370), hardware-and-prices.md §3 "
       "[MLE-net], [NCCL-212]"},
      {LinkKind::kPcie, 0.88,
       "H200 PCIe5 x16 H2D 55.43 of 63 GB/s (nvbandwidth, hardware-and-prices.md §3 [MLE-net])"},
      {LinkKind::kInfiniband, 0.95,
       "NCCL reaches 46-49 of 50 GB/s per NDR NIC (hardware-and-prices.md §1 [NCCL-290], "
       "[NCCL-267])"},
      {LinkKind::kEthernet, 0.95,
       "assumed equal to InfiniBand (RoCE; no measured row in the references)"},
  };
  c.protocols = {
      {Protocol::kLl, 0.5, false, Nanoseconds(6600), Nanoseconds(6800), Hops(600, 1000, 2700),
       Hops(600, 1000, 5000),
       "latencies: NCCL tuning.cc@b6475625 baseLat Ring/LL 6.6, Tree/LL 6.8 us; hwLat LL "
       "Ring 0.6/1.0/2.7, Tree 0.6/1.0/5.0 us (NVLink/PCI/NET). Fraction 0.5: an LL line "
       "carries 4 B of data and a 4 B flag per 8 B (NCCL's tuner also caps LL at 1/4 of the "
       "bus bandwidth for all-reduce and at llMaxBw per node; not modelled)"},
      {Protocol::kLl128, 0.92, true, Nanoseconds(14000), Nanoseconds(14000),
       Hops(1900, 2500, 4000), Hops(1250, 1900, 8500),
       "latencies: NCCL tuning.cc@b6475625 baseLat Ring/LL128 and Tree/LL128 14.0 us; hwLat "
       "LL128 Ring 1.9/2.5/4.0, Tree 1.25/1.9/8.5 us. Fraction 0.92: tuning.cc Ring/LL128 "
       "busBw x 0.92 (120 of 128 B are data). NVLink only: tuning.cc enables LL128 by default "
       "only on NVLink paths (per-channel caps not modelled)"},
      {Protocol::kSimple, 1.0, false, Nanoseconds(8400), Nanoseconds(0), Hops(3400, 5700, 14000),
       Hops(28000, 28000, 28000),
       "latencies: NCCL tuning.cc@b6475625 baseLat Ring/Simple 8.4, Tree/Simple 0 us; hwLat "
       "Simple Ring 3.4/5.7/14.0, Tree 28/28/28 us (a 256 kB chunk per tree level)"},
  };
  // Calibrated: 8x B200 all-reduce at 32 KiB 1.2 GB/s busbw ([MLE-net]) = 1.75 x 32 KiB /
  // 1.2 GB/s = 47.79 us; NCCL's model gives ring/LL 6.6 + 14 x 0.6 = 15.0 us + 0.16 us of
  // data, so 32.6 us per call are not in NCCL's tuning model (kernel launch, the wait for
  // the last rank to arrive, the framework's call).
  c.call_overhead = Nanoseconds(32600);
  // NCCL tuning.cc: tree bandwidth x0.85 for the pure-tree pattern (ecosystem.md §3.2).
  c.tree_efficiency = 0.85;
  // Calibrated: B200 128 MiB all-reduce 569 GB/s busbw (hardware-and-prices.md §3):
  // 1.75 x 128 MiB / 569 GB/s = 412.8 us; minus call_overhead 32.6 us and 128 MiB at NVLS
  // algbw 477.5 GB/s (281.1 us) = 99.1 us. (NCCL's own hwLat NVLS/Simple is 23 us; with it
  // the NVLS line would pass 128 MiB at 697 GB/s, +22%.)
  c.nvls_latency = Nanoseconds(99100);
  // Calibrated: 8x H100 NVLS busbw ~480 GB/s ([NCCL-212], [NCCL-1455]) =
  // 450 x scale x 0.85 x 2(8-1)/8 -> scale = 480 / (450 x 0.85 x 1.75) = 0.717.
  c.nvls_scale = 0.717;
  c.nvls = {
      {"nvlink4", 0.85,
       "NCCL src/tuning/nvls.cc nvlsEfficiency Hopper 0.85 (ecosystem.md §3.2, secondary)"},
      {"nvlink5", 0.74,
       "NCCL src/tuning/nvls.cc nvlsEfficiency Blackwell 0.74 (ecosystem.md §3.2, secondary)"},
  };
  return c;
}

}  // namespace

const LinkCalibration& CollectiveCalibration::ForLink(LinkKind kind) const {
  for (const LinkCalibration& row : links) {
    if (row.kind == kind) return row;
  }
  SIM_CHECK(false) << "no calibration row for link kind " << LinkKindName(kind);
  return links.front();
}

const ProtocolCalibration& CollectiveCalibration::ForProtocol(Protocol p) const {
  for (const ProtocolCalibration& row : protocols) {
    if (row.protocol == p) return row;
  }
  SIM_CHECK(false) << "no calibration row for protocol " << ProtocolName(p);
  return protocols.front();
}

const NvlsCalibration* CollectiveCalibration::ForNvlink(std::string_view nvlink) const {
  for (const NvlsCalibration& row : nvls) {
    if (row.nvlink == nvlink) return &row;
  }
  return nullptr;
}

const CollectiveCalibration& DefaultCollectiveCalibration() {
  static const CollectiveCalibration* const kDefault = new CollectiveCalibration(MakeDefault());
  return *kDefault;
}

}  // namespace clustersim::topology
