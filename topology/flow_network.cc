#include "topology/flow_network.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::topology {

FlowNetwork::FlowNetwork(const Cluster& cluster, sim::Simulator& sim,
                         const CollectiveCalibration& calibration, FlowNetworkOptions options)
    : cluster_(cluster), sim_(sim), planner_(cluster, calibration), options_(options),
      links_(cluster.num_links()) {
  for (int e = 0; e < cluster.num_links(); ++e) {
    links_[e].capacity = LinkCapacity(cluster, calibration, e);
    SIM_CHECK(links_[e].capacity > 0) << "link " << e << " has no capacity in a sealed cluster";
  }
  end_of_instant_handler_ = sim_.AddHandler(this);
}

void FlowNetwork::Changed() {
  // A completion due now must see this instant's rates before it runs (its
  // event may be moved), and an observer is told of every change.
  if (options_.resolve_each_change || rate_observer_ || pending_at_ == sim_.Now()) {
    Resolve();
    Reschedule();
    return;
  }
  if (resolve_requested_) return;
  resolve_requested_ = true;
  sim_.AtEndOfInstant(end_of_instant_handler_, 0);
}

void FlowNetwork::OnEvent(uint32_t) {
  resolve_requested_ = false;
  Resolve();
  Reschedule();
}

absl::Status FlowNetwork::StartCollective(const CollectiveRequest& r,
                                          absl::AnyInvocable<void()> on_done) {
  absl::StatusOr<std::vector<int>> gpus = ValidateCollectiveRequest(cluster_, r);
  if (!gpus.ok()) return gpus.status();
  absl::StatusOr<int> prepared = PlansOf(r.op, r.algorithm, *std::move(gpus));
  if (!prepared.ok()) return prepared.status();
  return StartPrepared(*prepared, r.protocol, r.bytes, std::move(on_done));
}

absl::StatusOr<int> FlowNetwork::Prepare(Collective op, Algorithm algorithm,
                                         const std::vector<int>& gpus) {
  absl::StatusOr<std::vector<int>> valid =
      ValidateCollectiveRequest(cluster_, CollectiveRequest{op, gpus, sim::Bytes(0), algorithm});
  if (!valid.ok()) return valid.status();
  return PlansOf(op, algorithm, *std::move(valid));
}

absl::StatusOr<int> FlowNetwork::PlansOf(Collective op, Algorithm algorithm,
                                         std::vector<int> gpus) {
  PlanKey key{op, algorithm, std::move(gpus)};
  auto it = plan_index_.find(key);
  if (it != plan_index_.end()) return it->second;
  std::vector<CollectivePlan> candidates;
  if (std::get<2>(key).size() >= 2) {
    absl::StatusOr<std::vector<CollectivePlan>> c =
        planner_.Candidates(op, algorithm, std::get<2>(key));
    if (!c.ok()) return c.status();
    candidates = *std::move(c);
  }
  const int id = static_cast<int>(prepared_.size());
  prepared_.push_back(std::move(candidates));
  plan_index_.emplace(std::move(key), id);
  return id;
}

absl::Status FlowNetwork::StartPrepared(int prepared, Protocol protocol, sim::Bytes bytes,
                                        absl::AnyInvocable<void()> on_done) {
  if (bytes.count() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bytes=", bytes.count(), " must be >= 0"));
  }
  const std::vector<CollectivePlan>& plans = prepared_[prepared];
  if (plans.empty()) {  // fewer than 2 GPUs
    sim_.ScheduleAfter(sim::Duration::Zero(), std::move(on_done));
    return absl::OkStatus();
  }
  absl::StatusOr<PlanChoice> choice = ChoosePlan(plans, protocol, bytes);
  if (!choice.ok()) return choice.status();
  int id;
  if (free_collectives_.empty()) {
    id = static_cast<int>(collectives_.size());
    collectives_.emplace_back();
  } else {
    id = free_collectives_.back();
    free_collectives_.pop_back();
  }
  CollectiveState& c = collectives_[id];
  c.plan = choice->plan;
  c.protocol = choice->protocol;
  c.bytes = static_cast<double>(bytes.count()) * c.plan->ByteScale(c.protocol);
  c.phase = 0;
  c.flows_left = 0;
  c.on_done = std::move(on_done);
  ++active_collectives_;
  StartPhase(id);
  return absl::OkStatus();
}

void FlowNetwork::StartPhase(int collective) {
  CollectiveState& c = collectives_[collective];
  const CollectivePlan& plan = *c.plan;
  const PlanPhase& phase = plan.phases[c.phase];
  const sim::Time now = sim_.Now();
  for (int i = phase.first_flow; i < phase.first_flow + phase.num_flows; ++i) {
    const PlanFlow& pf = plan.flows[i];
    const double bytes = pf.bytes_per_byte * c.bytes;
    if (bytes <= 0) continue;
    int id;
    if (free_flows_.empty()) {
      id = static_cast<int>(flows_.size());
      flows_.emplace_back();
    } else {
      id = free_flows_.back();
      free_flows_.pop_back();
    }
    FlowState& f = flows_[id];
    f.uses = std::span<const LinkUse>(plan.uses).subspan(pf.first_use, pf.num_uses);
    f.position.resize(pf.num_uses);
    f.total = bytes;
    f.remaining = bytes;
    f.rate = 0;
    f.last = now;
    f.collective = collective;
    for (int u = 0; u < pf.num_uses; ++u) {
      LinkState& l = links_[f.uses[u].link];
      if (l.flows.empty()) l.busy_since = now;
      f.position[u] = static_cast<int>(l.flows.size());
      l.flows.push_back({id, u, f.uses[u].weight});
      seeds_.push_back(f.uses[u].link);
    }
    ++active_flows_;
    ++c.flows_left;
  }
  if (c.flows_left == 0) {
    EndPhase(collective);
    return;
  }
  Changed();
}

void FlowNetwork::EndPhase(int collective) {
  const CollectiveState& c = collectives_[collective];
  const sim::Duration latency = sim::Duration::FromSecondsDouble(
      c.plan->phases[c.phase].latency_seconds[ProtocolIndex(c.protocol)]);
  const sim::Time end = EndTime(sim_.Now(), latency, "a phase's latency");
  if (end == sim::Time::Infinite()) return;  // never ends; clock_status_ says why
  sim_.ScheduleAt(end, [this, collective] {
    CollectiveState& c = collectives_[collective];
    if (++c.phase < static_cast<int>(c.plan->phases.size())) {
      StartPhase(collective);
      return;
    }
    absl::AnyInvocable<void()> done = std::move(c.on_done);
    c.plan = nullptr;
    free_collectives_.push_back(collective);
    --active_collectives_;
    done();
  });
}

void FlowNetwork::OnCompletion() {
  pending_at_ = sim::Time::Infinite();
  const sim::Time now = sim_.Now();
  if (!seeds_.empty()) Resolve();  // this instant's earlier changes first
  while (!heap_.empty() && flows_[heap_.front()].finish <= now) {
    const int id = heap_.front();
    FlowState& f = flows_[id];
    for (const LinkUse& u : f.uses) links_[u.link].bytes += u.weight * f.total;
    f.remaining = 0;
    f.last = now;
    const int collective = f.collective;
    Detach(id);
    if (--collectives_[collective].flows_left == 0) EndPhase(collective);
  }
  Changed();
}

void FlowNetwork::Detach(int flow) {
  FlowState& f = flows_[flow];
  const sim::Time now = sim_.Now();
  for (size_t u = 0; u < f.uses.size(); ++u) {
    const int link = f.uses[u].link;
    LinkState& l = links_[link];
    const int pos = f.position[u];
    const Slot moved = l.flows.back();
    l.flows[pos] = moved;
    flows_[moved.flow].position[moved.use] = pos;
    l.flows.pop_back();
    if (l.flows.empty()) l.busy += now - l.busy_since;
    seeds_.push_back(link);
  }
  HeapRemove(flow);
  f.collective = -1;
  free_flows_.push_back(flow);
  --active_flows_;
}

sim::Time FlowNetwork::EndTime(sim::Time now, sim::Duration d, const char* what) {
  sim::Time end;
  if (d != sim::Duration::Max() && sim::CheckedAdd(now, d, &end) && end != sim::Time::Infinite()) {
    return end;
  }
  if (clock_status_.ok()) {
    clock_status_ = absl::OutOfRangeError(absl::StrCat(
        "simulated time overflows the picosecond clock (int64, ",
        sim::Duration::Max().ToSeconds() / 86400, " days): ", what, " from ", now.ToSeconds(),
        " s would end past it; such a collective comes from bad input (message sizes or link "
        "bandwidths far beyond real hardware): check the scenario's model, batch and cluster "
        "values"));
  }
  return sim::Time::Infinite();
}

void FlowNetwork::Reschedule() {
  const sim::Time target = heap_.empty() ? sim::Time::Infinite() : flows_[heap_.front()].finish;
  if (target == pending_at_) return;
  if (pending_at_ != sim::Time::Infinite()) sim_.Cancel(pending_);
  pending_at_ = target;
  if (target != sim::Time::Infinite()) {
    pending_ = sim_.ScheduleAt(target, [this] { OnCompletion(); });
  }
}

LinkUsage FlowNetwork::Usage(int link) const {
  SIM_CHECK(link >= 0 && link < static_cast<int>(links_.size())) << "link " << link
                                                                  << " out of range";
  const LinkState& l = links_[link];
  const sim::Time now = sim_.Now();
  LinkUsage u{l.bytes, l.busy};
  for (const Slot& s : l.flows) {
    const FlowState& f = flows_[s.flow];
    u.bytes += s.weight *
               (f.total - f.remaining + std::min(f.rate * (now - f.last).ToSeconds(), f.remaining));
  }
  if (!l.flows.empty()) u.busy += now - l.busy_since;
  return u;
}

bool FlowNetwork::HeapLess(int a, int b) const {
  return std::pair(flows_[a].finish, a) < std::pair(flows_[b].finish, b);
}

void FlowNetwork::HeapSwap(int i, int j) {
  std::swap(heap_[i], heap_[j]);
  flows_[heap_[i]].heap_index = i;
  flows_[heap_[j]].heap_index = j;
}

void FlowNetwork::SiftUp(int i) {
  while (i > 0) {
    const int parent = (i - 1) / 2;
    if (!HeapLess(heap_[i], heap_[parent])) return;
    HeapSwap(i, parent);
    i = parent;
  }
}

void FlowNetwork::SiftDown(int i) {
  const int n = static_cast<int>(heap_.size());
  while (true) {
    int best = i;
    for (int child : {2 * i + 1, 2 * i + 2}) {
      if (child < n && HeapLess(heap_[child], heap_[best])) best = child;
    }
    if (best == i) return;
    HeapSwap(i, best);
    i = best;
  }
}

void FlowNetwork::HeapFix(int flow) {
  FlowState& f = flows_[flow];
  if (f.heap_index < 0) {
    f.heap_index = static_cast<int>(heap_.size());
    heap_.push_back(flow);
  }
  SiftUp(f.heap_index);
  SiftDown(f.heap_index);
}

void FlowNetwork::HeapRemove(int flow) {
  const int i = flows_[flow].heap_index;
  if (i < 0) return;
  const int last = static_cast<int>(heap_.size()) - 1;
  if (i != last) HeapSwap(i, last);
  heap_.pop_back();
  flows_[flow].heap_index = -1;
  if (i < last) {
    const int displaced = heap_[i];
    SiftUp(i);
    SiftDown(flows_[displaced].heap_index);
  }
}

}  // namespace clustersim::topology
