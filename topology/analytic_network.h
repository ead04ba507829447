// File: topology/analytic_network.h
//
// The alpha-beta network tier: costs a collective from the routes of its
// algorithm's point-to-point hops on the cluster graph, without contention
// between collectives. For each algorithm phase the hops' routes are overlaid;
// the phase moves data at the rate of its bottleneck link, where each link
// offers bandwidth x efficiency(link kind) and is shared by the hops that cross
// it. Per step, a latency alpha (per link kind, averaged over the hops as NCCL
// does) is added. Constants: collective_calibration.h.
//
// Algorithms (n ranks, S bytes as in collective.h, spb = seconds per byte of the
// bottleneck):
//   ring          NCCL's rings. Multi-node groups use one ring per NIC of a node
//                 (NCCL channels), each entering a node at a different GPU.
//                 all-reduce 2(n-1) steps of S/n; reduce-scatter / all-gather n-1
//                 steps of S/n; broadcast pipelined S; all-to-all one phase of
//                 n(n-1) pairwise flows of S/n; send/recv one flow of S.
//   tree          double binary tree (all-reduce only): latency
//                 2((ppn-1) alpha_intra + ceil(log2 nodes) alpha_inter), bandwidth
//                 2S over the chain/ring links x tree efficiency.
//   nvls          NVSwitch in-network reduction (all-reduce, one node, H100 and
//                 later): nvls_latency + S / (NVLink bw x nvls_scale x NCCL's
//                 per-generation NVLS efficiency).
//   hierarchical  all-reduce across >= 2 nodes with the same GPU count k on each:
//                 intra-node ring reduce-scatter, k concurrent inter-node ring
//                 all-reduces of S/k (one per local rank, rail-aligned), intra-node
//                 ring all-gather.
//   auto          as NCCL: for all-reduce the candidate with the least predicted
//                 time among ring, tree (groups on >= 2 nodes) and nvls (eligible
//                 one-node groups); with the default constants this is tree for
//                 small multi-node messages, nvls for large messages on one
//                 NVLS-capable node, ring otherwise. Other operations: ring.
//
// Cost: O(hops x route length) per estimate, plus one BFS per hop (see
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

#include <vector>

#include "absl/status/statusor.h"
#include "topology/cluster.h"
#include "topology/collective.h"
#include "topology/collective_calibration.h"
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
  struct Flow {
    int src;
    int dst;
    double weight;  // share of the phase's per-hop bytes this flow carries
  };
  struct Phase {
    double seconds_per_byte = 0;  // bottleneck: max over links of load / effective bw
    double mean_alpha = 0;        // seconds, averaged over flows
    double intra_alpha = 0;       // seconds, max over intra-node flows
    double inter_alpha = 0;       // seconds, max over inter-node flows
  };

  Phase Analyze(const std::vector<Flow>& flows) const;
  // NCCL-style rings over `gpus` (sorted by node): one per channel.
  std::vector<Flow> RingFlows(const std::vector<int>& gpus) const;

  absl::StatusOr<double> Ring(const CollectiveRequest& r, const std::vector<int>& gpus) const;
  absl::StatusOr<double> Tree(const CollectiveRequest& r, const std::vector<int>& gpus) const;
  absl::StatusOr<double> Nvls(const CollectiveRequest& r, const std::vector<int>& gpus) const;
  absl::StatusOr<double> Hierarchical(const CollectiveRequest& r,
                                      const std::vector<int>& gpus) const;

  const Cluster& cluster_;
  const CollectiveCalibration& calibration_;
  std::vector<int> nics_per_node_;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_ANALYTIC_NETWORK_H_
