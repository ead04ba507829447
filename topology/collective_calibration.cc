#include "topology/collective_calibration.h"

#include "sim/check.h"

namespace clustersim::topology {
namespace {

using sim::Nanoseconds;

// Measured rows (hardware-and-prices.md §3) and their role:
//   calibrated  8x A100 ring 234.89 GB/s and 8x H100 ring 370 GB/s -> NVLink efficiency
//               (mean of 234.89/300 = 0.783 and 370/450 = 0.822).
//   calibrated  8x H100 NVLS ~480 GB/s -> nvls_scale (with NCCL's Hopper efficiency 0.85).
//   calibrated  B200 128 MiB 569 GB/s -> nvls_latency (the NVLS line of the 1-node curve;
//               auto then picks ring there, +8%).
//   predicted   8x H200 ring 367.61, 8x H200 NVLS 482.26, 8x B200 845.67 (NVLS with NCCL's
//               Blackwell efficiency 0.74), 3 nodes x 8 A100 with 4x HDR 84.8-96,
//               4 nodes x 8 B200 with 8x 400G 377-382, B200 1 MiB 36 and 16 MiB 255
//               (ring with NCCL's own latencies).
CollectiveCalibration MakeDefault() {
  CollectiveCalibration c;
  c.links = {
      {LinkKind::kNvlink, 0.80, Nanoseconds(3400),
       "efficiency: calibrated on 8x A100 (234.89) and 8x H100 ring (370), "
       "hardware-and-prices.md §3 [MLE-net], [NCCL-212]; step latency: NCCL "
       "src/graph/tuning.cc@01afd20 hwLat NVLink Ring/Simple 3.4 us (ecosystem.md §3.2)"},
      {LinkKind::kPcie, 0.88, Nanoseconds(3400),
       "efficiency: H200 PCIe5 x16 H2D 55.43 of 63 GB/s (nvbandwidth, hardware-and-prices.md "
       "§3 [MLE-net]); step latency: assumed equal to NVLink (no measurement)"},
      {LinkKind::kInfiniband, 0.95, Nanoseconds(9600),
       "efficiency: NCCL reaches 46-49 of 50 GB/s per NDR NIC (hardware-and-prices.md §1 "
       "[NCCL-290], [NCCL-267]); step latency: NCCL tuning.cc@01afd20 network Ring/Simple "
       "9.6 us (ecosystem.md §3.2)"},
      {LinkKind::kEthernet, 0.95, Nanoseconds(9600),
       "assumed equal to InfiniBand (RoCE; no measured row in the references)"},
  };
  // NCCL tuning.cc@01afd20: Ring/Simple baseLat 8.4 us (ecosystem.md §3.2).
  c.base_latency = Nanoseconds(8400);
  // NCCL tuning.cc: tree bandwidth x0.85 for the pure-tree pattern (ecosystem.md §3.2).
  c.tree_efficiency = 0.85;
  // Calibrated: B200 128 MiB all-reduce 569 GB/s busbw (hardware-and-prices.md §3):
  // 1.75 x 128 MiB / 569 GB/s = 412.8 us; minus 128 MiB at NVLS algbw 477.6 GB/s
  // (281.0 us) = 131.8 us.
  c.nvls_latency = Nanoseconds(131800);
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
