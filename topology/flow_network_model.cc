#include "topology/flow_network_model.h"

#include <vector>

#include "sim/check.h"
#include "sim/simulator.h"
#include "topology/flow_network.h"

namespace clustersim::topology {

FlowNetworkModel::FlowNetworkModel(const Cluster& cluster,
                                   const CollectiveCalibration& calibration)
    : cluster_(cluster), calibration_(calibration), planner_(cluster, calibration) {}

absl::StatusOr<CollectiveEstimate> FlowNetworkModel::Estimate(const CollectiveRequest& r) const {
  absl::StatusOr<std::vector<int>> gpus = ValidateCollectiveRequest(cluster_, r);
  if (!gpus.ok()) return gpus.status();
  CollectiveEstimate est = ZeroCostEstimate(r);
  if (gpus->size() < 2) return est;
  // The algorithm and protocol FlowNetwork will pick (the same choice on the same plans).
  absl::StatusOr<std::vector<CollectivePlan>> candidates =
      planner_.Candidates(r.op, r.algorithm, *gpus);
  if (!candidates.ok()) return candidates.status();
  absl::StatusOr<PlanChoice> choice = ChoosePlan(*candidates, r.protocol, r.bytes);
  if (!choice.ok()) return choice.status();
  est.algorithm = choice->plan->algorithm;
  est.protocol = choice->protocol;

  sim::Simulator sim;
  FlowNetwork net(cluster_, sim, calibration_);
  sim::Time done = sim::Time::Infinite();
  absl::Status s = net.StartCollective(r, [&sim, &done] { done = sim.Now(); });
  if (!s.ok()) return s;
  sim.Run();
  SIM_CHECK(done != sim::Time::Infinite() && done > sim::Time::Zero())
      << "flow-level collective did not finish";
  est.time = done.SinceStart();
  const double seconds = est.time.ToSeconds();
  est.algbw_gbs = static_cast<double>(r.bytes.count()) / seconds * 1e-9;
  est.busbw_gbs = est.algbw_gbs * BusBandwidthFactor(r.op, static_cast<int>(gpus->size()));
  return est;
}

}  // namespace clustersim::topology
