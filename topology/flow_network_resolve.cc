// FlowNetwork's rate solve (flow_network.h): the connected component of flows
// and links around the changed links, each flow's progress settled, weighted
// max-min rates by progressive filling, new completion times, and the link
// rate changes reported to the observer.
#include <algorithm>
#include <functional>
#include <utility>

#include "sim/check.h"
#include "topology/flow_network.h"

namespace clustersim::topology {

void FlowNetwork::Settle(FlowState& f, sim::Time now) {
  // Links are credited when the flow ends (Usage adds flows in flight), so
  // this stays O(1) per flow however many links the flow crosses.
  const double moved = std::min(f.rate * (now - f.last).ToSeconds(), f.remaining);
  if (moved > 0) f.remaining -= moved;
  f.last = now;
}

void FlowNetwork::Resolve() {
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  const auto add_link = [&](int link) {
    LinkState& l = links_[link];
    if (l.mark == epoch_ || l.flows.empty()) return;
    l.mark = epoch_;
    comp_links_.push_back(link);
  };
  if (options_.full_recompute) {
    for (int e = 0; e < static_cast<int>(links_.size()); ++e) add_link(e);
  } else {
    for (int e : seeds_) add_link(e);
  }
  if (rate_observer_) rate_seeds_.assign(seeds_.begin(), seeds_.end());
  seeds_.clear();
  // The connected component of flows and links around the changed links.
  for (size_t i = 0; i < comp_links_.size(); ++i) {
    for (const Slot& s : links_[comp_links_[i]].flows) {
      FlowState& f = flows_[s.flow];
      if (f.mark == epoch_) continue;
      f.mark = epoch_;
      comp_flows_.push_back(s.flow);
      for (const LinkUse& u : f.uses) add_link(u.link);
    }
  }
  flows_resolved_ += static_cast<int64_t>(comp_flows_.size());
  const sim::Time now = sim_.Now();
  for (int id : comp_flows_) {
    Settle(flows_[id], now);
    flows_[id].fixed = false;
  }
  // Progressive filling: repeatedly saturate the link with the smallest fair
  // share and fix the rates of its flows. Shares only grow as flows are fixed,
  // so stale heap entries are re-pushed with their current share.
  share_heap_.clear();
  for (int e : comp_links_) {
    LinkState& l = links_[e];
    l.remaining = l.capacity;
    l.weight_sum = 0;
    for (const Slot& s : l.flows) l.weight_sum += s.weight;
    share_heap_.push_back({l.remaining / l.weight_sum, e});
  }
  const auto greater = std::greater<std::pair<double, int>>();
  std::make_heap(share_heap_.begin(), share_heap_.end(), greater);
  double floor = 0;
  // Once every flow has its rate the remaining links change nothing.
  size_t unfixed = comp_flows_.size();
  while (unfixed > 0 && !share_heap_.empty()) {
    std::pop_heap(share_heap_.begin(), share_heap_.end(), greater);
    const auto [share, e] = share_heap_.back();
    share_heap_.pop_back();
    LinkState& l = links_[e];
    if (l.weight_sum <= 0) continue;
    const double current = std::max(l.remaining, 0.0) / l.weight_sum;
    if (current != share) {
      share_heap_.push_back({current, e});
      std::push_heap(share_heap_.begin(), share_heap_.end(), greater);
      continue;
    }
    floor = std::max(floor, share);
    for (const Slot& s : l.flows) {
      FlowState& f = flows_[s.flow];
      if (f.fixed) continue;
      f.fixed = true;
      f.rate = floor;
      --unfixed;
      for (const LinkUse& u : f.uses) {
        LinkState& other = links_[u.link];
        other.remaining -= u.weight * floor;
        other.weight_sum -= u.weight;
      }
    }
  }
  for (int id : comp_flows_) {
    FlowState& f = flows_[id];
    SIM_CHECK(f.fixed && f.rate > 0) << "flow " << id << " got no rate";
    f.finish = EndTime(now,
                       sim::Duration::CeilPicoseconds(static_cast<long double>(f.remaining) /
                                                      f.rate * 1e12L),
                       "a flow's transfer");
    HeapFix(id);
  }
  if (rate_observer_) ReportRates(now);
}

void FlowNetwork::ReportRates(sim::Time now) {
  rate_changes_.clear();
  const auto report = [&](int link) {
    LinkState& l = links_[link];
    double rate = 0;
    for (const Slot& s : l.flows) rate += s.weight * flows_[s.flow].rate;
    if (rate == l.reported_rate) return;
    l.reported_rate = rate;
    rate_changes_.push_back({link, rate});
  };
  for (int e : comp_links_) report(e);
  // Seeds that lost their last flow are not in the component; each reports once.
  for (int e : rate_seeds_) {
    LinkState& l = links_[e];
    if (l.mark == epoch_) continue;
    l.mark = epoch_;
    report(e);
  }
  rate_seeds_.clear();
  if (!rate_changes_.empty()) rate_observer_(now, rate_changes_);
}

}  // namespace clustersim::topology
