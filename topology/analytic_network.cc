#include "topology/analytic_network.h"

#include <vector>

#include "sim/check.h"

namespace clustersim::topology {

AnalyticNetwork::AnalyticNetwork(const Cluster& cluster, const CollectiveCalibration& calibration)
    : cluster_(cluster), planner_(cluster, calibration) {}

absl::StatusOr<CollectiveEstimate> AnalyticNetwork::Estimate(const CollectiveRequest& r) const {
  absl::StatusOr<std::vector<int>> gpus = ValidateCollectiveRequest(cluster_, r);
  if (!gpus.ok()) return gpus.status();
  CollectiveEstimate est{sim::Duration::Zero(), r.algorithm, 0, 0};
  if (est.algorithm == Algorithm::kAuto) est.algorithm = Algorithm::kRing;
  if (gpus->size() < 2) return est;
  absl::StatusOr<std::vector<CollectivePlan>> candidates =
      planner_.Candidates(r.op, r.algorithm, *gpus);
  if (!candidates.ok()) return candidates.status();
  const CollectivePlan& plan = ChoosePlan(*candidates, r.bytes);
  const double seconds = plan.Seconds(r.bytes);
  SIM_CHECK(seconds > 0) << "non-positive collective time";
  est.algorithm = plan.algorithm;
  est.time = sim::Duration::FromSecondsDouble(seconds);
  est.algbw_gbs = static_cast<double>(r.bytes.count()) / seconds * 1e-9;
  est.busbw_gbs = est.algbw_gbs * BusBandwidthFactor(r.op, static_cast<int>(gpus->size()));
  return est;
}

}  // namespace clustersim::topology
