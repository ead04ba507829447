// File: topology/collective_plan_builder.h
//
// CollectivePlanner::Builder, the accumulator every algorithm of
// collective_plan.cc writes its plan through: it routes each hop, merges a
// flow's link crossings, and closes phases with their bottleneck link load and
// per-protocol latency. Included only by collective_plan.cc.
//
// Thread-safety: a Builder is used by one thread; its per-link scratch arrays
// come from a thread-local free list.
#ifndef CLUSTERSIM_TOPOLOGY_COLLECTIVE_PLAN_BUILDER_H_
#define CLUSTERSIM_TOPOLOGY_COLLECTIVE_PLAN_BUILDER_H_

#include <algorithm>
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "sim/check.h"
#include "topology/cluster.h"
#include "topology/collective_calibration.h"
#include "topology/collective_plan.h"

namespace clustersim::topology {

// Accumulates flows phase by phase: routes hops, merges a flow's crossings per
// link, and tracks each phase's link loads and hop latencies.
class CollectivePlanner::Builder {
 public:
  // What a phase waits after its flows, before the protocol is known.
  struct Latency {
    bool base = false;   // NCCL's baseLat of the latency table
    bool tree = false;   // tree's latency table instead of ring's
    std::array<double, 4> steps{};  // hop latencies to add, by LinkKind
    double fixed_seconds = 0;       // protocol-independent (NVLS)
  };

  // `gpus`: the collective's group, whose nodes with more than 2 of it run
  // their host-bridge hops over SHM (IsShmHop).
  Builder(const Cluster& cluster, const CollectiveCalibration& cal, Algorithm algorithm,
          const std::vector<int>& gpus)
      : cluster_(cluster), cal_(cal), scratch_(Scratch::Acquire(cluster.num_links())),
        flow_count_(scratch_->flow_count), phase_load_(scratch_->phase_load),
        shm_nodes_(NodesHoldingMoreThanTwo(cluster, gpus)) {
    plan_.algorithm = algorithm;
  }
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;
  // Leaves the scratch arrays all zero for the next builder on this thread.
  ~Builder() {
    for (int e : flow_touched_) flow_count_[e] = 0.0;
    for (int e : phase_touched_) phase_load_[e] = 0.0;
    Scratch::Release(std::move(scratch_));
  }

  void BeginFlow(double bytes_per_byte) {
    SIM_CHECK(flow_touched_.empty()) << "BeginFlow inside a flow";
    flow_bytes_ = bytes_per_byte;
  }
  // Adds the route of the hop src -> dst (GPU indices) to the current flow. A
  // hop over the SHM transport loads each link of its route 1/shm_efficiency
  // times per byte.
  void AddHop(int src, int dst) {
    LinkKind slowest = LinkKind::kNvlink;
    const double weight = IsShmHop(src, dst) ? 1.0 / cal_.shm_efficiency : 1.0;
    for (int e : cluster_.Route(src, dst)) {
      AddLink(e, weight);
      const LinkKind k = cluster_.link(e).kind;
      if (KindRank(k) > KindRank(slowest)) slowest = k;
    }
    ++hop_count_[static_cast<int>(slowest)];
    ++hops_;
    if (slowest != LinkKind::kNvlink) all_nvlink_ = false;
    int& max = cluster_.NodeOf(src) == cluster_.NodeOf(dst) ? intra_kind_ : inter_kind_;
    if (max < 0 || KindRank(slowest) > KindRank(static_cast<LinkKind>(max))) {
      max = static_cast<int>(slowest);
    }
  }
  void AddLink(int e, double weight) {
    if (flow_count_[e] == 0.0) flow_touched_.push_back(e);
    flow_count_[e] += weight;
  }
  void EndFlow() {
    PlanFlow f{static_cast<int>(plan_.uses.size()), static_cast<int>(flow_touched_.size()),
               flow_bytes_};
    for (int e : flow_touched_) {
      plan_.uses.push_back({e, flow_count_[e]});
      if (phase_load_[e] == 0.0) phase_touched_.push_back(e);
      phase_load_[e] += flow_count_[e] * flow_bytes_;
      flow_count_[e] = 0.0;
    }
    flow_touched_.clear();
    if (f.num_uses > 0) plan_.flows.push_back(f);
  }

  // `steps` ring steps at the phase's mean hop latency (NCCL averages its
  // intra- and inter-node steps the same way).
  Latency RingSteps(double steps, bool base) const {
    Latency l;
    l.base = base;
    for (int k = 0; k < 4 && hops_ > 0; ++k) l.steps[k] = steps * hop_count_[k] / hops_;
    return l;
  }
  // Tree levels: `intra` at the slowest intra-node hop, `inter` at the slowest
  // inter-node hop.
  Latency TreeSteps(double intra, double inter) const {
    Latency l;
    l.base = true;
    l.tree = true;
    if (intra_kind_ >= 0) l.steps[intra_kind_] += intra;
    if (inter_kind_ >= 0) l.steps[inter_kind_] += inter;
    return l;
  }
  void SimpleOnly() { simple_only_ = true; }

  // Closes the phase started after the previous EndPhase.
  void EndPhase(const Latency& latency) {
    PlanPhase p{phase_first_flow_, static_cast<int>(plan_.flows.size()) - phase_first_flow_,
                {}, 0.0};
    for (int e : phase_touched_) {
      p.seconds_per_byte =
          std::max(p.seconds_per_byte, phase_load_[e] / LinkCapacity(cluster_, cal_, e));
      phase_load_[e] = 0.0;
    }
    phase_touched_.clear();
    for (Protocol proto : kConcreteProtocols) {
      const ProtocolCalibration& pc = cal_.ForProtocol(proto);
      double seconds = latency.fixed_seconds;
      if (plan_.phases.empty()) seconds += cal_.call_overhead.ToSeconds();
      if (latency.base) seconds += (latency.tree ? pc.tree_base : pc.ring_base).ToSeconds();
      for (int k = 0; k < 4; ++k) {
        const LinkKind kind = static_cast<LinkKind>(k);
        seconds += latency.steps[k] * (latency.tree ? pc.TreeHop(kind) : pc.RingHop(kind)).ToSeconds();
      }
      p.latency_seconds[ProtocolIndex(proto)] = seconds;
      plan_.latency_seconds[ProtocolIndex(proto)] += seconds;
    }
    plan_.phases.push_back(p);
    plan_.seconds_per_byte += p.seconds_per_byte;
    phase_first_flow_ = static_cast<int>(plan_.flows.size());
    hop_count_ = {};
    intra_kind_ = inter_kind_ = -1;
    hops_ = 0;
  }

  CollectivePlan Finish() && {
    for (Protocol proto : kConcreteProtocols) {
      const ProtocolCalibration& pc = cal_.ForProtocol(proto);
      const int i = ProtocolIndex(proto);
      plan_.bandwidth_fraction[i] = pc.bandwidth_fraction;
      plan_.enabled[i] = (!pc.nvlink_only || all_nvlink_) &&
                         (!simple_only_ || proto == Protocol::kSimple);
    }
    return std::move(plan_);
  }

 private:
  // Orders link kinds from fastest to slowest.
  static int KindRank(LinkKind k) {
    return k == LinkKind::kNvlink ? 0 : k == LinkKind::kPcie ? 1 : 2;
  }

  // Per-link arrays, all zero between uses. A cluster of 16,384 GPUs has
  // hundreds of thousands of links and a step plans thousands of
  // collectives, so builders reuse them (one set per builder alive on a
  // thread) instead of zeroing megabytes for every plan.
  struct Scratch {
    std::vector<double> flow_count;
    std::vector<double> phase_load;
    static std::unique_ptr<Scratch> Acquire(int links) {
      std::vector<std::unique_ptr<Scratch>>& free = FreeList();
      std::unique_ptr<Scratch> s;
      if (free.empty()) {
        s = std::make_unique<Scratch>();
      } else {
        s = std::move(free.back());
        free.pop_back();
      }
      if (static_cast<int>(s->flow_count.size()) < links) {
        s->flow_count.resize(links, 0.0);
        s->phase_load.resize(links, 0.0);
      }
      return s;
    }
    static void Release(std::unique_ptr<Scratch> s) { FreeList().push_back(std::move(s)); }
    static std::vector<std::unique_ptr<Scratch>>& FreeList() {
      thread_local std::vector<std::unique_ptr<Scratch>> free;
      return free;
    }
  };

  const Cluster& cluster_;
  const CollectiveCalibration& cal_;
  CollectivePlan plan_;
  std::unique_ptr<Scratch> scratch_;
  std::vector<double>& flow_count_;  // per link, the current flow's crossings
  std::vector<int> flow_touched_;
  std::vector<double>& phase_load_;  // per link, bytes per request byte this phase
  std::vector<int> phase_touched_;
  // The nodes holding more than 2 of `gpus`, sorted: there NCCL (2.23 and
  // later, ncclTopoCheckP2p: p2pLevel PATH_PXB) does not use P2P between GPUs
  // whose PCIe path crosses a CPU host bridge, and a hop between them goes
  // through host memory (the SHM transport). AMD hosts keep P2P for up to 2
  // GPUs, so 2 or fewer keep it here whatever the host. Proportional to the
  // group, not the cluster.
  static std::vector<int> NodesHoldingMoreThanTwo(const Cluster& cluster,
                                                  const std::vector<int>& gpus) {
    std::vector<int> nodes;
    nodes.reserve(gpus.size());
    for (int g : gpus) nodes.push_back(cluster.NodeOf(g));
    std::sort(nodes.begin(), nodes.end());
    std::vector<int> marked;
    for (size_t i = 0; i < nodes.size();) {
      size_t j = i;
      while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
      if (j - i > 2) marked.push_back(nodes[i]);
      i = j;
    }
    return marked;
  }
  // An intra-node hop of a node of shm_nodes_ whose route crosses a host
  // bridge without NVLink.
  bool IsShmHop(int src, int dst) const {
    const int node = cluster_.NodeOf(src);
    if (node != cluster_.NodeOf(dst) ||
        !std::binary_search(shm_nodes_.begin(), shm_nodes_.end(), node)) {
      return false;
    }
    bool host_bridge = false;
    for (int e : cluster_.Route(src, dst)) {
      const Link& l = cluster_.link(e);
      if (l.kind == LinkKind::kNvlink) return false;
      if (cluster_.vertex(l.dst).kind == VertexKind::kHostBridge) host_bridge = true;
    }
    return host_bridge;
  }

  const std::vector<int> shm_nodes_;  // NodesHoldingMoreThanTwo of the group
  double flow_bytes_ = 0;
  int phase_first_flow_ = 0;
  std::array<double, 4> hop_count_{};  // this phase's hops by slowest LinkKind
  int intra_kind_ = -1, inter_kind_ = -1;  // slowest LinkKind of intra/inter-node hops
  int hops_ = 0;
  bool all_nvlink_ = true;  // every hop of the plan so far
  bool simple_only_ = false;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_COLLECTIVE_PLAN_BUILDER_H_
