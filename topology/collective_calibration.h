// File: topology/collective_calibration.h
//
// The constants of the analytic collective model, as embedded data with the
// source of each. One efficiency and one step latency per link kind, plus one
// base latency / efficiency per algorithm; no constant is fitted to a single
// measured row. Which measured row calibrated which constant, and which rows
// are predictions, is written next to each value in collective_calibration.cc
// and checked by calibration_test.cc.
//
// Example:
//   const CollectiveCalibration& cal = DefaultCollectiveCalibration();
//   double eff = cal.ForLink(LinkKind::kNvlink).efficiency;   // 0.80
#ifndef CLUSTERSIM_TOPOLOGY_COLLECTIVE_CALIBRATION_H_
#define CLUSTERSIM_TOPOLOGY_COLLECTIVE_CALIBRATION_H_

#include <string_view>
#include <vector>

#include "sim/units.h"
#include "topology/link_technology.h"

namespace clustersim::topology {

struct LinkCalibration {
  LinkKind kind;
  double efficiency;          // achieved / line-rate bandwidth for ring-style traffic
  sim::Duration step_latency;  // software + hardware latency of one algorithm step
  std::string_view source;
};

struct NvlsCalibration {
  std::string_view nvlink;  // technology name of the GPU-NVSwitch link
  double efficiency;        // NCCL's nvlsEfficiency for that generation
  std::string_view source;
};

struct CollectiveCalibration {
  std::vector<LinkCalibration> links;  // one row per LinkKind
  sim::Duration base_latency;          // per collective launch (NCCL baseLat)
  double tree_efficiency;              // double binary tree bandwidth factor
  sim::Duration nvls_latency;          // one NVLS all-reduce, whole operation
  double nvls_scale;                   // NVLS algbw = link bw x nvls_scale x efficiency(gen)
  std::vector<NvlsCalibration> nvls;

  // REQUIRES: a row for `kind` exists (true for the default table).
  const LinkCalibration& ForLink(LinkKind kind) const;
  // NCCL's NVLS efficiency for an NVLink technology; nullptr when unknown.
  const NvlsCalibration* ForNvlink(std::string_view nvlink) const;
};

const CollectiveCalibration& DefaultCollectiveCalibration();

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_COLLECTIVE_CALIBRATION_H_
