// File: topology/flow_network.h
//
// The flow-level network tier: collectives run as flows over the cluster
// graph's directed links, driven by a sim::Simulator, sharing every link's
// capacity (line rate x efficiency of its kind) max-min fairly with everything
// else running at the same time. Two all-reduces whose rings cross one NIC each
// get about half of it; traffic through a 2:1 oversubscribed spine gets half.
//
// Each collective follows its CollectivePlan (collective_plan.h: what each
// algorithm becomes, what is and is not captured): phases run one after the
// other; a phase starts its flows, and when the last one ends, waits the
// phase latency. A flow is a set of links crossed at one rate (an NCCL ring
// channel crosses every edge of its ring), so a ring over 16,384 GPUs is 8
// flows, not 2(n-1) steps of n transfers. Alone on the network, a collective
// costs what AnalyticNetwork::Estimate says, up to picosecond rounding; the
// algorithm and protocol are chosen the same way (on the uncontended
// prediction); the protocol scales the bytes of every flow by 1/fraction and
// sets the phase latencies (collective_plan.h).
//
// Rates: max-min fairness with weights (a flow crossing a link twice uses
// twice its rate there), solved by progressive filling. When flows start or
// end, only the connected component of flows and links reachable from the
// changed links is re-solved (exact: other components cannot change);
// `full_recompute` re-solves everything, for tests. The changes of one
// simulated instant (collectives starting and flows ending at the same time,
// as symmetric replicas' do) are re-solved once, at the end of the instant
// (Simulator::AtEndOfInstant): rates only matter once time advances. Each
// flow's last re-solve in the instant sees the same component, link flow
// lists and arithmetic order either way, so the rates are the same bits as
// re-solving after each change (tested), unless the filling's guard against
// a share rounding below one already fixed picks up another component's
// share. With a link-rate observer, or when a flow completion is due at this
// instant, each change is re-solved at once instead. Flows' progress is
// settled lazily, when their rate changes. The network keeps one pending
// simulator event, at the earliest predicted completion (an indexed heap
// over flows).
// Flows, collectives and solver scratch live in pools indexed by integer id:
// after warm-up, events allocate nothing (a collective's start may, for its
// plan cache key and callback).
//
// Cost: a rate change costs O(U log L) for the U link crossings and L links of
// the re-solved component. A plan is built once per (operation, algorithm,
// group), with one Cluster::Route per hop, and cached.
//
// Example:
//   sim::Simulator sim;
//   FlowNetwork net(cluster, sim);
//   absl::Status s = net.StartCollective({Collective::kAllReduce, {0, 1, 2, 3}, sim::MiB(64)},
//                                        [&] { done_at = sim.Now(); });
//   sim.Run();
//   LinkUsage u = net.Usage(cluster.Route(0, 1)[0]);   // bytes carried, busy time
//
// Thread-safety: none; the simulator's thread drives it.
#ifndef CLUSTERSIM_TOPOLOGY_FLOW_NETWORK_H_
#define CLUSTERSIM_TOPOLOGY_FLOW_NETWORK_H_

#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/simulator.h"
#include "sim/units.h"
#include "topology/cluster.h"
#include "topology/collective.h"
#include "topology/collective_calibration.h"
#include "topology/collective_plan.h"

namespace clustersim::topology {

struct FlowNetworkOptions {
  // Re-solve every flow on every change instead of the changed component.
  bool full_recompute = false;
  // Re-solve after every change instead of once per simulated instant.
  bool resolve_each_change = false;
};

// One directed link's aggregate rate after a re-solve: the sum over its flows
// of weight x rate, bytes per second (never above the link's Capacity, up to
// floating-point rounding of the progressive filling).
struct LinkRate {
  int link;
  double bytes_per_second;
};

// Told after each re-solve, at simulated time `now`, of the links whose
// aggregate rate changed since the last report (a link whose last flow ended
// reports 0), in a deterministic order. `changed` is only valid during the call.
using LinkRateObserver =
    absl::AnyInvocable<void(sim::Time now, const std::vector<LinkRate>& changed)>;

// What one directed link has carried so far.
struct LinkUsage {
  double bytes = 0;             // bytes carried
  sim::Duration busy;           // time with at least one flow on it
};

class FlowNetwork : private sim::EventHandler {
 public:
  // `cluster`, `sim` and `calibration` must outlive the network.
  FlowNetwork(const Cluster& cluster, sim::Simulator& sim,
              const CollectiveCalibration& calibration = DefaultCollectiveCalibration(),
              FlowNetworkOptions options = {});
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  // Runs one collective from Now() as flows over the real routes and calls
  // `on_done` (from a simulator event) when its last phase ends; fewer than 2
  // GPUs end at Now(). Errors are those of AnalyticNetwork::Estimate (bad GPU
  // index, negative bytes, an algorithm the group cannot use); nothing starts.
  absl::Status StartCollective(const CollectiveRequest& r, absl::AnyInvocable<void()> on_done);

  // The same in two halves, for callers that start many collectives over one
  // group: Prepare validates `op` and `algorithm` on `gpus` (bytes aside) and
  // returns a handle to its plans; StartPrepared starts one with `protocol`
  // and `bytes` (errors: negative bytes, a protocol no plan can use). Handles
  // stay valid for the network's lifetime.
  absl::StatusOr<int> Prepare(Collective op, Algorithm algorithm, const std::vector<int>& gpus);
  absl::Status StartPrepared(int prepared, Protocol protocol, sim::Bytes bytes,
                             absl::AnyInvocable<void()> on_done);

  // Bytes carried and busy time of directed link `link` up to Now().
  // REQUIRES: 0 <= link < cluster.num_links().
  LinkUsage Usage(int link) const;
  // Capacity the network gives link `link`, bytes per second.
  double Capacity(int link) const { return links_[link].capacity; }

  // Reports aggregate link rate changes (traces' link-utilisation counters).
  // Without an observer, re-solves do no extra work. Replaces any earlier one.
  void SetLinkRateObserver(LinkRateObserver observer) { rate_observer_ = std::move(observer); }

  // OK, or OUT_OF_RANGE once a flow or phase would end past the picosecond
  // clock (absurd bytes or rates). That collective then never ends, so the
  // engine's run stops with it unfinished; callers report this status first.
  const absl::Status& clock_status() const { return clock_status_; }

  int active_flows() const { return active_flows_; }
  int active_collectives() const { return active_collectives_; }
  // Sum over rate solves of the number of flows re-solved (incremental vs full).
  int64_t flows_resolved() const { return flows_resolved_; }

 private:
  struct Slot {
    int flow;
    int use;        // index into the flow's uses
    double weight;  // that use's weight, kept here for the solver's sums
  };
  struct LinkState {
    double capacity = 0;
    std::vector<Slot> flows;  // active flows crossing the link
    double bytes = 0;         // carried by the flows that ended
    sim::Duration busy;
    sim::Time busy_since;
    // Solver scratch.
    double remaining = 0;
    double weight_sum = 0;
    uint64_t mark = 0;
    double reported_rate = 0;  // last aggregate rate told to rate_observer_
  };
  struct FlowState {
    std::span<const LinkUse> uses;  // in its collective's plan
    std::vector<int> position;      // in links_[uses[i].link].flows
    double total = 0;               // bytes per crossing, at the start
    double remaining = 0;           // bytes per crossing still to move
    double rate = 0;            // bytes per second per crossing
    sim::Time last;             // `remaining` is exact at this time
    sim::Time finish;           // predicted completion
    int collective = -1;
    int heap_index = -1;
    uint64_t mark = 0;
    bool fixed = false;
  };
  struct CollectiveState {
    const CollectivePlan* plan = nullptr;
    Protocol protocol = Protocol::kSimple;
    double bytes = 0;
    int phase = 0;
    int flows_left = 0;
    absl::AnyInvocable<void()> on_done;
  };
  using PlanKey = std::tuple<Collective, Algorithm, std::vector<int>>;

  // Re-solves the end of this instant's pending changes (AtEndOfInstant).
  void OnEvent(uint32_t) override;
  // Records that seeds_ changed: re-solves now, or once at the end of the instant.
  void Changed();
  void StartPhase(int collective);
  void EndPhase(int collective);
  void OnCompletion();
  // Re-solves the rates of the flows connected to `seeds_` and clears it
  // (flow_network_resolve.cc, with Settle and ReportRates).
  void Resolve();
  void Settle(FlowState& f, sim::Time now);
  // now + d, or Time::Infinite() (and clock_status_ set, naming `what`) when
  // that is past the clock.
  sim::Time EndTime(sim::Time now, sim::Duration d, const char* what);
  void Detach(int flow);
  void Reschedule();
  // Tells rate_observer_ the links of this re-solve whose aggregate rate changed.
  void ReportRates(sim::Time now);
  // Indexed min-heap over flows by (finish, id).
  bool HeapLess(int a, int b) const;
  void HeapFix(int flow);
  void HeapRemove(int flow);
  void HeapSwap(int i, int j);
  void SiftUp(int i);
  void SiftDown(int i);

  const Cluster& cluster_;
  sim::Simulator& sim_;
  CollectivePlanner planner_;
  FlowNetworkOptions options_;
  // Finds or builds the plans of a validated group; its handle.
  absl::StatusOr<int> PlansOf(Collective op, Algorithm algorithm, std::vector<int> gpus);

  std::map<PlanKey, int> plan_index_;  // -> prepared_
  // Per handle: the group's candidate plans (empty: fewer than 2 GPUs, nothing to run).
  std::vector<std::vector<CollectivePlan>> prepared_;
  std::vector<LinkState> links_;
  std::vector<FlowState> flows_;
  std::vector<int> free_flows_;
  std::vector<CollectiveState> collectives_;
  std::vector<int> free_collectives_;
  std::vector<int> heap_;  // flow ids
  std::vector<int> seeds_;  // links whose flow set changed
  // Solver scratch, reused.
  std::vector<int> comp_links_;
  std::vector<int> comp_flows_;
  std::vector<std::pair<double, int>> share_heap_;
  uint64_t epoch_ = 0;
  uint32_t end_of_instant_handler_ = 0;
  bool resolve_requested_ = false;  // an end-of-instant re-solve is asked for
  sim::EventId pending_;
  sim::Time pending_at_ = sim::Time::Infinite();
  int active_flows_ = 0;
  absl::Status clock_status_;
  int active_collectives_ = 0;
  int64_t flows_resolved_ = 0;
  LinkRateObserver rate_observer_;
  std::vector<int> rate_seeds_;        // seeds of the current re-solve, when observed
  std::vector<LinkRate> rate_changes_;  // reused between reports
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_FLOW_NETWORK_H_
