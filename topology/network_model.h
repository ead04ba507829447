// File: topology/network_model.h
//
// The interface every network tier implements: cost one collective on a
// cluster. Implementations: AnalyticNetwork (alpha-beta, no contention).
//
// Example:
//   AnalyticNetwork net(cluster);
//   absl::StatusOr<CollectiveEstimate> e =
//       net.Estimate({Collective::kAllReduce, {0, 1, 2, 3}, sim::MiB(64)});
#ifndef CLUSTERSIM_TOPOLOGY_NETWORK_MODEL_H_
#define CLUSTERSIM_TOPOLOGY_NETWORK_MODEL_H_

#include "absl/status/statusor.h"
#include "topology/collective.h"

namespace clustersim::topology {

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  // Errors (InvalidArgument) name the field: GPU index out of range or repeated,
  // negative bytes, an algorithm the group or operation cannot use (e.g. NVLS
  // on a node without in-switch reduction). Fewer than 2 GPUs costs zero time.
  virtual absl::StatusOr<CollectiveEstimate> Estimate(const CollectiveRequest& r) const = 0;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_NETWORK_MODEL_H_
