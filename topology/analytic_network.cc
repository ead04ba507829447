#include "topology/analytic_network.h"

#include <vector>

#include "sim/check.h"

namespace clustersim::topology {

AnalyticNetwork::AnalyticNetwork(const Cluster& cluster, const CollectiveCalibration& calibration)
    : cluster_(cluster), planner_(cluster, calibration) {}

absl::StatusOr<CollectiveEstimate> AnalyticNetwork::Estimate(const CollectiveRequest& r) const {
  absl::StatusOr<std::vector<int>> gpus = ValidateCollectiveRequest(cluster_, r);
  if (!gpus.ok()) return gpus.status();
  CollectiveEstimate est = ZeroCostEstimate(r);
  if (gpus->size() < 2) return est;
  absl::StatusOr<std::vector<CollectivePlan>> candidates =
      planner_.Candidates(r.op, r.algorithm, *gpus);
  if (!candidates.ok()) return candidates.status();
  absl::StatusOr<PlanChoice> choice = ChoosePlan(*candidates, r.protocol, r.bytes);
  if (!choice.ok()) return choice.status();
  const double seconds = choice->Seconds(r.bytes);
  SIM_CHECK(seconds > 0) << "non-positive collective time";
  est.algorithm = choice->plan->algorithm;
  est.protocol = choice->protocol;
  est.time = sim::Duration::FromSecondsDouble(seconds);
  est.algbw_gbs = static_cast<double>(r.bytes.count()) / seconds * 1e-9;
  est.busbw_gbs = est.algbw_gbs * BusBandwidthFactor(r.op, static_cast<int>(gpus->size()));
  return est;
}

}  // namespace clustersim::topology
