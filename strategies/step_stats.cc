#include "strategies/step_stats.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::strategies {
namespace {

using Interval = std::pair<int64_t, int64_t>;

// Sorts and merges overlapping intervals. One lane's spans arrive sorted (a
// lane is a serial queue, reported as its tasks end): only merges need sorting.
std::vector<Interval> Union(std::vector<Interval> v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// The union of two unions, in one pass.
std::vector<Interval> Merge(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> both(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), both.begin());
  return Union(std::move(both));
}

int64_t Length(const std::vector<Interval>& u) {
  int64_t total = 0;
  for (const Interval& i : u) total += i.second - i.first;
  return total;
}

// Length of (a minus b), both unions.
int64_t Minus(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t j = 0;
  for (const Interval& i : a) {
    int64_t cursor = i.first;
    while (j < b.size() && b[j].second <= cursor) ++j;
    size_t k = j;
    while (k < b.size() && b[k].first < i.second) {
      if (b[k].first > cursor) total += b[k].first - cursor;
      cursor = std::max(cursor, b[k].second);
      ++k;
    }
    if (cursor < i.second) total += i.second - cursor;
  }
  return total;
}

}  // namespace

StepStats::StepStats(const StepPlan& plan) : plan_(plan) {
  local_of_.assign(plan.world_size, -1);
  for (size_t i = 0; i < plan.simulated_gpus.size(); ++i) {
    local_of_[plan.simulated_gpus[i]] = static_cast<int>(i);
  }
  intervals_.assign(plan.simulated_gpus.size(), std::vector<std::vector<Interval>>(kNumLanes));
  // Host launches are neither compute nor communication: no lane.
  lane_of_.assign(plan.graph.NumResources(), nullptr);
  for (sim::ResourceId id = 0; id < plan.graph.NumResources(); ++id) {
    const sim::TaskGraph::Resource& r = plan.graph.resource(id);
    if (r.lane != kHostLane) lane_of_[id] = &intervals_[local_of_[r.group]][r.lane];
  }
}

void StepStats::OnSpan(const sim::TaskGraph& g, const sim::Span& s) {
  SIM_CHECK(&g == &plan_.graph) << "StepStats observes its own plan's graph only";
  if (lane_of_[s.resource] == nullptr) return;
  if (s.tag != 0 && !plan_.merged_runs.empty()) {
    // A merged run with collectives inside: each piece on its own lane.
    const MergedRun& run = plan_.merged_runs[s.tag - 1];
    std::vector<std::vector<Interval>>& lanes = intervals_[local_of_[g.resource(s.resource).group]];
    const int64_t t = s.start.picoseconds();
    for (uint32_t k = 0; k < run.num_pieces; ++k) {
      const RunPiece& piece = plan_.run_pieces[run.first_piece + k];
      const int64_t start = t + piece.start.picoseconds();
      SIM_CHECK(start + piece.length.picoseconds() <= s.end.picoseconds())
          << "merged run " << s.task << " has a piece past its end";
      Join(lanes[piece.lane], start, start + piece.length.picoseconds());
    }
    return;
  }
  Join(*lane_of_[s.resource], s.start.picoseconds(), s.end.picoseconds());
}

void StepStats::Join(std::vector<Interval>& lane, int64_t start, int64_t end) {
  // A span that starts inside or at the end of the last one (a serial lane's
  // next task) joins it: the union, all that Summarize reads, is the same.
  if (!lane.empty() && lane.back().first <= start && start <= lane.back().second) {
    lane.back().second = std::max(lane.back().second, end);
    return;
  }
  lane.emplace_back(start, end);
}

StepStats::Summary StepStats::Summarize(sim::Time makespan) const {
  Summary best;
  best.step_time = makespan - sim::Time::Zero();
  int64_t best_compute = -1;
  for (size_t i = 0; i < intervals_.size(); ++i) {
    const std::vector<Interval> compute = Union(intervals_[i][kComputeLane]);
    const int64_t busy = Length(compute);
    if (busy <= best_compute) continue;
    best_compute = busy;
    const std::vector<Interval> tp = Union(intervals_[i][kTensorCommLane]);
    const std::vector<Interval> dp = Union(intervals_[i][kDataCommLane]);
    const std::vector<Interval> pp = Union(intervals_[i][kPipelineCommLane]);
    const std::vector<Interval> ep = Union(intervals_[i][kExpertCommLane]);
    const std::vector<Interval> cp = Union(intervals_[i][kContextCommLane]);
    const std::vector<Interval> comm = CommUnion(i);
    best.critical_gpu = plan_.simulated_gpus[i];
    best.compute = sim::Picoseconds(busy);
    best.exposed_comm = sim::Picoseconds(Minus(comm, compute));
    best.exposed_tp = sim::Picoseconds(Minus(tp, compute));
    best.exposed_dp = sim::Picoseconds(Minus(dp, compute));
    best.exposed_pp = sim::Picoseconds(Minus(pp, compute));
    best.exposed_ep = sim::Picoseconds(Minus(ep, compute));
    best.exposed_cp = sim::Picoseconds(Minus(cp, compute));
    best.bubble =
        sim::Picoseconds(Minus({{0, makespan.picoseconds()}}, Merge(comm, compute)));
  }
  return best;
}

std::vector<StepStats::Interval> StepStats::CommUnion(size_t i) const {
  std::vector<Interval> comm;
  for (Lane lane : {kTensorCommLane, kDataCommLane, kPipelineCommLane, kExpertCommLane,
                    kContextCommLane}) {
    comm = Merge(comm, Union(intervals_[i][lane]));
  }
  return comm;
}

std::vector<StepStats::GpuBusy> StepStats::PerGpu() const {
  std::vector<GpuBusy> out;
  for (size_t i = 0; i < intervals_.size(); ++i) {
    const std::vector<Interval> compute = Union(intervals_[i][kComputeLane]);
    out.push_back({plan_.simulated_gpus[i], sim::Picoseconds(Length(compute)),
                   sim::Picoseconds(Minus(CommUnion(i), compute))});
  }
  return out;
}

}  // namespace clustersim::strategies
