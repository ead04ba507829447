// File: topology/analytic_network.h
//
// The alpha-beta network tier: costs a collective from the routes of its
// algorithm's point-to-point hops on the cluster graph, without contention
// between collectives. Each phase of the algorithm's CollectivePlan
// (collective_plan.h, which documents every algorithm) moves data at the rate
// of its bottleneck link, where each link offers bandwidth x efficiency(link
// kind) and is shared by the hops that cross it; a per-phase latency (NCCL's
// baseLat plus steps x the hops' mean hwLat, for the chosen protocol) is added,
// and the protocol's bandwidth fraction divides the bandwidth term. Constants:
// collective_calibration.h. `auto` picks, as NCCL's tuner does, the
// (algorithm, protocol) with the least predicted time among ring, tree (groups
// on >= 2 nodes) and nvls (eligible one-node groups) and LL, LL128 (all-NVLink
// groups) and Simple: with the default constants LL for small messages, LL128
// for medium ones on one NVLink node, tree for small multi-node messages, nvls
// for large messages on one NVLS-capable node, ring/Simple otherwise. A forced
// request.protocol restricts the choice. Other operations: ring.
//
// Cost: O(hops x route length) per estimate, plus one Dijkstra per hop (see
// Cluster::Route); all-to-all is O(n^2) routes, meant for expert-parallel
// groups (tens to hundreds of GPUs).
//
// Example:
//   absl::StatusOr<Cluster> c = BuildCluster({.node_preset = "dgx-h100"});
//   AnalyticNetwork net(*c);
//   auto e = net.Estimate({Collective::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, sim::GiB(1)});
//   // e->algorithm == Algorithm::kNvls, e->busbw_gbs ~ 480
//
// Thread-safety: Estimate is const and safe to call concurrently.
#ifndef CLUSTERSIM_TOPOLOGY_ANALYTIC_NETWORK_H_
#define CLUSTERSIM_TOPOLOGY_ANALYTIC_NETWORK_H_

#include "absl/status/statusor.h"
#include "topology/cluster.h"
#include "topology/collective.h"
#include "topology/collective_calibration.h"
#include "topology/collective_plan.h"
#include "topology/network_model.h"

namespace clustersim::topology {

class AnalyticNetwork : public NetworkModel {
 public:
  // `cluster` and `calibration` must outlive this object.
  explicit AnalyticNetwork(const Cluster& cluster,
                           const CollectiveCalibration& calibration =
                               DefaultCollectiveCalibration());

  absl::StatusOr<CollectiveEstimate> Estimate(const CollectiveRequest& r) const override;

 private:
  const Cluster& cluster_;
  CollectivePlanner planner_;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_ANALYTIC_NETWORK_H_
