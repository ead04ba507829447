// File: topology/collective_calibration.h
//
// The constants of the collective model, as data with the source of each:
// topology/data/collective_calibration.textproto (schema topology/proto/network.proto),
// embedded in the binary and parsed once at first use: one bandwidth efficiency per link kind; per NCCL protocol (LL, LL128,
// Simple) a bandwidth fraction and NCCL's latency table (base latency per
// algorithm, per-hop hardware latency per link kind); one per-call overhead;
// the tree and NVLS factors. No constant is fitted to a single measured row
// that it is then checked against: which measured row calibrated which
// constant, and which rows are predictions, is written next to each value in
// collective_calibration.textproto and checked by calibration_test.cc.
//
// Example:
//   const CollectiveCalibration& cal = DefaultCollectiveCalibration();
//   double eff = cal.ForLink(LinkKind::kNvlink).efficiency;           // 0.80
//   double ll = cal.ForProtocol(Protocol::kLl).bandwidth_fraction;     // 0.5
#ifndef CLUSTERSIM_TOPOLOGY_COLLECTIVE_CALIBRATION_H_
#define CLUSTERSIM_TOPOLOGY_COLLECTIVE_CALIBRATION_H_

#include <array>
#include <string_view>
#include <vector>

#include "sim/units.h"
#include "topology/collective.h"
#include "topology/link_technology.h"

namespace clustersim::topology {

struct LinkCalibration {
  LinkKind kind;
  double efficiency;  // achieved / line-rate bandwidth for ring-style Simple traffic
  std::string_view source;
};

// Per-hop latencies by the kind of a hop's slowest link, indexed by LinkKind
// (NCCL's NVLink / PCI / NET rows; InfiniBand and Ethernet are both NET).
using HopLatencies = std::array<sim::Duration, 4>;

// One NCCL protocol: NCCL's tuning model (src/graph/tuning.cc) costs an
// algorithm with protocol p as baseLat[algorithm][p] + steps x
// hwLat[link][algorithm][p] + bytes / (bandwidth x fraction[p]).
struct ProtocolCalibration {
  Protocol protocol;
  double bandwidth_fraction;  // of the link capacity (Simple = 1)
  bool nvlink_only;           // enabled only when every hop is NVLink (LL128)
  sim::Duration ring_base;    // baseLat, Ring (also hierarchical and point-to-point)
  sim::Duration tree_base;    // baseLat, Tree
  HopLatencies ring_hop;      // hwLat per ring step
  HopLatencies tree_hop;      // hwLat per tree level
  std::string_view source;

  sim::Duration RingHop(LinkKind k) const { return ring_hop[static_cast<int>(k)]; }
  sim::Duration TreeHop(LinkKind k) const { return tree_hop[static_cast<int>(k)]; }
};

struct NvlsCalibration {
  std::string_view nvlink;  // technology name of the GPU-NVSwitch link
  double efficiency;        // NCCL's nvlsEfficiency for that generation
  std::string_view source;
};

// NCCL over one scale-out NIC technology, where a measurement on that fabric
// differs from its link kind's row.
struct NicCalibration {
  std::string_view nic_link;  // technology name of the NIC link
  double efficiency;          // achieved / line-rate bandwidth; replaces the kind's
  int ring_nics;              // NICs a multi-node ring crosses each node through; 0 = all
  std::string_view source;
};

struct CollectiveCalibration {
  std::vector<LinkCalibration> links;          // one row per LinkKind
  std::vector<ProtocolCalibration> protocols;  // LL, LL128, Simple, in that order
  sim::Duration call_overhead;  // per collective call, on top of NCCL's latency model
  double tree_efficiency;       // double binary tree bandwidth factor
  sim::Duration nvls_latency;   // one NVLS all-reduce, whole operation (Simple only)
  double nvls_scale;            // NVLS algbw = link bw x nvls_scale x efficiency(gen)
  std::vector<NvlsCalibration> nvls;
  // Bandwidth of a hop over NCCL's SHM transport (through host memory) as a
  // share of P2P over the same links: NCCL 2.23 and later do not use P2P
  // across a CPU host bridge in a node with more than 2 of the group's GPUs.
  double shm_efficiency;
  std::vector<NicCalibration> nics;  // by NIC technology; most have none
  // Where call_overhead, tree_efficiency, nvls_latency, nvls_scale and
  // shm_efficiency come from.
  std::string_view call_overhead_source;
  std::string_view tree_efficiency_source;
  std::string_view nvls_latency_source;
  std::string_view nvls_scale_source;
  std::string_view shm_efficiency_source;

  // REQUIRES: a row for `kind` exists (true for the default table).
  const LinkCalibration& ForLink(LinkKind kind) const;
  // REQUIRES: p != kAuto and a row exists (true for the default table).
  const ProtocolCalibration& ForProtocol(Protocol p) const;
  // NCCL's NVLS efficiency for an NVLink technology; nullptr when unknown.
  const NvlsCalibration* ForNvlink(std::string_view nvlink) const;
  // The row for a NIC technology; nullptr when it has none.
  const NicCalibration* ForNic(std::string_view nic_link) const;
  // Achieved / line-rate bandwidth of a link: its technology's NIC row when
  // there is one, else its kind's row.
  double Efficiency(LinkKind kind, std::string_view technology) const;
};

const CollectiveCalibration& DefaultCollectiveCalibration();

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_COLLECTIVE_CALIBRATION_H_
