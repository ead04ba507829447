// File: topology/collective_plan.h
//
// What a collective does to the wires, shared by both network tiers: a
// CollectivePlan is a list of phases run one after the other; each phase is a
// set of flows, then a latency. A flow is a set of directed links it crosses
// (with multiplicity) that all move data at the flow's one rate; per byte of the
// request it puts `bytes_per_byte` bytes on each crossing. Link capacity is line
// rate x the calibrated efficiency of the link kind (LinkCapacity).
//
//   AnalyticNetwork: time = sum over phases of latency + the bottleneck link's
//                    load / capacity (no other traffic), i.e. Seconds(bytes).
//   FlowNetwork:     runs the flows as max-min fair flows against everything
//                    else on the network, then waits the latency.
//
// Plans are linear in the message size, so a plan is built once per
// (operation, algorithm, group) and scaled.
//
// Protocols (collective_calibration.h): every plan is costed for NCCL's LL,
// LL128 and Simple. A protocol scales the bandwidth term by 1/fraction (the
// flows carry bytes / fraction, so they also load the links that much more in
// the flow tier) and has its own latencies (NCCL's baseLat and per-hop hwLat).
// LL128 is enabled only when every hop of the plan is NVLink; NVLS runs Simple
// only. The first phase of every plan also waits the per-call overhead.
//
// Algorithms (n ranks, S bytes as in collective.h, C channels = NICs per node
// on multi-node groups, else 1; hop(p) = the protocol's ring hwLat of a hop's
// slowest link kind, averaged over the phase's hops; base(p) = NCCL baseLat):
//   ring          one flow per NCCL ring (channel); each ring edge's route is
//                 crossed at the ring's rate. This is the steady state of NCCL's
//                 pipelined ring (every rank sends to its successor all the
//                 time; a slow edge slows the whole ring), not its 2(n-1)
//                 discrete steps. Bytes per crossing: all-reduce 2(n-1)/n S/C,
//                 reduce-scatter / all-gather (n-1)/n S/C, broadcast S/C.
//                 Latency base + steps x hop (2(n-1), n-1, n-1).
//                 all-to-all: n(n-1) independent one-route flows of S/n, latency
//                 base + (n-1) hop; send/recv: one flow of S, base + hop.
//   tree          all-reduce: the ring flows carrying 2S/C / tree_efficiency;
//                 latency tree base + 2((ppn-1) tree_hop_intra + ceil(log2 nodes)
//                 tree_hop_inter), each of the slowest link kind of intra- and
//                 inter-node hops.
//   nvls          all-reduce on one NVLS-capable node: per GPU one flow over its
//                 GPU->NVSwitch and NVSwitch->GPU links, S x efficiency(NVLink) /
//                 (nvls_scale x nvls_efficiency(gen)) per crossing, so that alone
//                 it runs at NVLink bw x nvls_scale x nvls_efficiency; latency
//                 nvls_latency; Simple only.
//   hierarchical  all-reduce, >= 2 nodes with k GPUs each: intra-node ring
//                 reduce-scatter ((k-1)/k S per node ring, base + (k-1) hop),
//                 k inter-node rings of local rank j (rail-aligned; 2(m-1)/m S/k,
//                 2(m-1) hop), intra-node all-gather (as the reduce-scatter,
//                 without base).
//   auto          the (candidate, protocol) with the least Seconds(bytes), ties
//                 to the earlier of ring, tree (groups on >= 2 nodes), nvls, and
//                 of LL, LL128, Simple (as NCCL's tuner). Other operations: ring.
//
// Not captured: per-step synchronisation and chunking inside a phase (a phase
// is its steady state plus a fixed latency), NCCL's per-channel protocol caps
// and tree correction factors, congestion control and packet effects,
// PCIe/NVLink read-write asymmetry, and the SM cost of communication kernels.
//
// Example:
//   CollectivePlanner planner(cluster, DefaultCollectiveCalibration());
//   absl::StatusOr<std::vector<int>> gpus = ValidateCollectiveRequest(cluster, r);
//   absl::StatusOr<std::vector<CollectivePlan>> c = planner.Candidates(r.op, r.algorithm, *gpus);
//   absl::StatusOr<PlanChoice> choice = ChoosePlan(*c, r.protocol, r.bytes);
//   double seconds = choice->Seconds(r.bytes);
//
// Thread-safety: CollectivePlanner's methods are const and safe to call concurrently.
#ifndef CLUSTERSIM_TOPOLOGY_COLLECTIVE_PLAN_H_
#define CLUSTERSIM_TOPOLOGY_COLLECTIVE_PLAN_H_

#include <array>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/units.h"
#include "topology/cluster.h"
#include "topology/collective.h"
#include "topology/collective_calibration.h"

namespace clustersim::topology {

struct LinkUse {
  int link;       // directed edge id
  double weight;  // how many times the flow crosses the link
};

struct PlanFlow {
  int first_use;          // into CollectivePlan::uses
  int num_uses;
  double bytes_per_byte;  // bytes per crossing, per byte of the request
};

// Per protocol, indexed by ProtocolIndex (LL, LL128, Simple).
using PerProtocol = std::array<double, 3>;

struct PlanPhase {
  int first_flow;            // into CollectivePlan::flows
  int num_flows;
  PerProtocol latency_seconds;  // waited after the flows end
  double seconds_per_byte;   // bottleneck link load / capacity, per request byte (Simple)
};

struct CollectivePlan {
  Algorithm algorithm = Algorithm::kRing;  // never kAuto
  std::array<bool, 3> enabled{};           // per protocol
  PerProtocol bandwidth_fraction{};        // per protocol
  std::vector<LinkUse> uses;
  std::vector<PlanFlow> flows;
  std::vector<PlanPhase> phases;
  PerProtocol latency_seconds{};  // sum over phases
  double seconds_per_byte = 0;    // sum over phases, Simple

  bool Supports(Protocol p) const { return enabled[ProtocolIndex(p)]; }
  // Bytes a flow carries per byte of its PlanFlow volume under protocol `p`.
  double ByteScale(Protocol p) const { return 1.0 / bandwidth_fraction[ProtocolIndex(p)]; }
  // The uncontended (analytic) time for `bytes` with protocol `p`.
  // REQUIRES: Supports(p).
  double Seconds(sim::Bytes bytes, Protocol p) const {
    return latency_seconds[ProtocolIndex(p)] +
           static_cast<double>(bytes.count()) * seconds_per_byte * ByteScale(p);
  }
};

// A plan and the protocol to run it with.
struct PlanChoice {
  const CollectivePlan* plan = nullptr;
  Protocol protocol = Protocol::kSimple;  // never kAuto
  double Seconds(sim::Bytes bytes) const { return plan->Seconds(bytes, protocol); }
};

// Bytes per second a directed link offers a collective: line rate x efficiency.
double LinkCapacity(const Cluster& cluster, const CollectiveCalibration& cal, int link);

// Checks GPU indices (in range, not repeated), bytes >= 0, send_recv's two GPUs.
// Returns the GPUs in algorithm order: sorted, or {src, dst} for send_recv.
// Errors are InvalidArgument naming the field.
absl::StatusOr<std::vector<int>> ValidateCollectiveRequest(const Cluster& cluster,
                                                           const CollectiveRequest& r);

// The estimate of a request with fewer than 2 GPUs: zero time, the requested
// algorithm and protocol (ring and Simple for auto).
CollectiveEstimate ZeroCostEstimate(const CollectiveRequest& r);

// The (plan, protocol) with the least Seconds(bytes) among the protocols each
// plan supports (only `protocol` unless kAuto); ties go to the earlier
// candidate, then the earlier protocol. Error (InvalidArgument, naming the
// field) when no candidate supports a forced protocol.
// REQUIRES: !candidates.empty().
absl::StatusOr<PlanChoice> ChoosePlan(const std::vector<CollectivePlan>& candidates,
                                      Protocol protocol, sim::Bytes bytes);

class CollectivePlanner {
 public:
  // `cluster` and `calibration` must outlive the planner.
  CollectivePlanner(const Cluster& cluster, const CollectiveCalibration& calibration);

  // Plans for `algorithm` on `gpus` (as returned by ValidateCollectiveRequest,
  // >= 2 of them): one plan, or for kAuto every eligible candidate in NCCL's
  // order. Errors (InvalidArgument) say why the algorithm cannot run the
  // operation on the group and what to use instead.
  absl::StatusOr<std::vector<CollectivePlan>> Candidates(Collective op, Algorithm algorithm,
                                                         const std::vector<int>& gpus) const;

 private:
  class Builder;
  absl::StatusOr<CollectivePlan> Plan(Collective op, Algorithm algorithm,
                                      const std::vector<int>& gpus) const;
  // NCCL-style rings over `gpus` (sorted): one per channel, a channel per NIC
  // of the first node (ring_channels_) when they span nodes.
  std::vector<std::vector<int>> Rings(const std::vector<int>& gpus) const;
  CollectivePlan Ring(Collective op, const std::vector<int>& gpus) const;
  CollectivePlan Tree(const std::vector<int>& gpus) const;
  absl::StatusOr<CollectivePlan> Nvls(const std::vector<int>& gpus) const;
  absl::StatusOr<CollectivePlan> Hierarchical(const std::vector<int>& gpus) const;

  const Cluster& cluster_;
  const CollectiveCalibration& calibration_;
  // Per node: its NICs, or fewer where the NIC technology's calibration row
  // says NCCL's rings cross a node through fewer (NicCalibration::ring_nics).
  std::vector<int> ring_channels_;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_COLLECTIVE_PLAN_H_
