// File: topology/flow_network_model.h
//
// The flow-level tier behind the NetworkModel interface: each Estimate runs the
// collective alone on a private simulator and FlowNetwork, and reports the time
// its last flow ends. Alone, it agrees with AnalyticNetwork up to picosecond
// rounding; it exists so that the flow tier passes the same test suites and
// tables as the analytic one. Contention needs a shared FlowNetwork
// (flow_network.h), driven by the run's simulator.
//
// Example:
//   FlowNetworkModel model(cluster);
//   absl::StatusOr<CollectiveEstimate> e =
//       model.Estimate({Collective::kAllReduce, {0, 1, 2, 3}, sim::MiB(64)});
//
// Thread-safety: Estimate is const and safe to call concurrently.
#ifndef CLUSTERSIM_TOPOLOGY_FLOW_NETWORK_MODEL_H_
#define CLUSTERSIM_TOPOLOGY_FLOW_NETWORK_MODEL_H_

#include "absl/status/statusor.h"
#include "topology/cluster.h"
#include "topology/collective.h"
#include "topology/collective_calibration.h"
#include "topology/collective_plan.h"
#include "topology/network_model.h"

namespace clustersim::topology {

class FlowNetworkModel : public NetworkModel {
 public:
  // `cluster` and `calibration` must outlive this object.
  explicit FlowNetworkModel(const Cluster& cluster,
                            const CollectiveCalibration& calibration =
                                DefaultCollectiveCalibration());

  absl::StatusOr<CollectiveEstimate> Estimate(const CollectiveRequest& r) const override;

 private:
  const Cluster& cluster_;
  const CollectiveCalibration& calibration_;
  CollectivePlanner planner_;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_FLOW_NETWORK_MODEL_H_
