#include "strategies/step_stats.h"

#include <algorithm>
#include <cstdint>
#include <thread>

#include "sim/check.h"

namespace clustersim::strategies {
namespace {

using Interval = std::pair<int64_t, int64_t>;

// Marks a lane slot with no span yet (no real span starts at the largest time).
constexpr Interval kNoSpan{INT64_MAX, INT64_MIN};

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

StepStats::StepStats(const StepPlan& plan)
    : plan_(plan),
      slots_(plan.simulated_gpus.size() * kNumLanes, SlotState{kNoSpan, 0}),
      closed_(slots_.size()) {
  local_of_.assign(plan.world_size, -1);
  for (size_t i = 0; i < plan.simulated_gpus.size(); ++i) {
    local_of_[plan.simulated_gpus[i]] = static_cast<int>(i);
  }
  // Host launches and host copies are neither compute nor communication: no
  // lane (a copy the compute waits for shows as idle compute).
  slot_of_.assign(plan.graph.NumResources(), -1);
  for (sim::ResourceId id = 0; id < plan.graph.NumResources(); ++id) {
    const sim::TaskGraph::Resource& r = plan.graph.resource(id);
    if (r.lane != kHostLane && r.lane != kHostCopyLane) {
      slot_of_[id] = local_of_[r.group] * kNumLanes + r.lane;
    }
  }
}

void StepStats::OnSpan(const sim::TaskGraph& g, const sim::Span& s) {
  SIM_CHECK(&g == &plan_.graph) << "StepStats observes its own plan's graph only";
  const int32_t slot = slot_of_[s.resource];
  if (slot < 0) return;
  if (s.tag != 0 && !plan_.merged_runs.empty()) {
    // A merged run with collectives inside: each piece on its own lane.
    const MergedRun& run = plan_.merged_runs[s.tag - 1];
    const int32_t first_slot = local_of_[g.GroupOf(s.resource)] * kNumLanes;
    const int64_t t = s.start.picoseconds();
    for (uint32_t k = 0; k < run.num_pieces; ++k) {
      const RunPiece& piece = plan_.run_pieces[run.first_piece + k];
      const int64_t start = t + piece.start.picoseconds();
      SIM_CHECK(start + piece.length.picoseconds() <= s.end.picoseconds())
          << "merged run " << s.task << " has a piece past its end";
      Join(first_slot + piece.lane, start, start + piece.length.picoseconds());
    }
    return;
  }
  Join(slot, s.start.picoseconds(), s.end.picoseconds());
}

void StepStats::Join(int32_t slot, int64_t start, int64_t end) {
  // A span that starts inside or at the end of the open one (a serial lane's
  // next task) joins it: the union, all that Summarize reads, is the same.
  SlotState& state = slots_[slot];
  Interval& open = state.open;
  if (open.first <= start && start <= open.second) {
    open.second = std::max(open.second, end);
    return;
  }
  if (open != kNoSpan) {
    closed_.Append(slot, open.first - state.closed_end);
    closed_.Append(slot, open.second - open.first);
    state.closed_end = open.second;
  }
  open = {start, end};
}

std::vector<StepStats::Interval> StepStats::LaneSpans(size_t i, int lane) const {
  const size_t slot = i * kNumLanes + lane;
  std::vector<Interval> spans;
  VarintChains::Reader packed = closed_.Read(slot);
  int64_t end = 0;
  for (int64_t gap, length; packed.Next(gap) && packed.Next(length);) {
    const int64_t start = end + gap;
    end = start + length;
    spans.emplace_back(start, end);
  }
  if (slots_[slot].open != kNoSpan) spans.push_back(slots_[slot].open);
  return spans;
}

StepStats::Summary StepStats::Summarize(sim::Time makespan) const {
  Summary best;
  best.step_time = makespan - sim::Time::Zero();
  const std::vector<GpuBusy>& busy = Busy();
  if (busy.empty()) return best;
  // The critical GPU: the most compute busy time, the lowest index on ties.
  size_t i = 0;
  for (size_t j = 1; j < busy.size(); ++j) {
    if (busy[j].compute > busy[i].compute) i = j;
  }
  const std::vector<Interval> compute = Union(LaneSpans(i, kComputeLane));
  const std::vector<Interval> comm = CommUnion(i);
  const auto exposed = [&](Lane lane) {
    return sim::Picoseconds(Minus(Union(LaneSpans(i, lane)), compute));
  };
  best.critical_gpu = busy[i].gpu;
  best.compute = busy[i].compute;
  best.exposed_comm = busy[i].exposed_comm;
  best.exposed_tp = exposed(kTensorCommLane);
  best.exposed_dp = exposed(kDataCommLane);
  best.exposed_pp = exposed(kPipelineCommLane);
  best.exposed_ep = exposed(kExpertCommLane);
  best.exposed_cp = exposed(kContextCommLane);
  best.bubble = sim::Picoseconds(Minus({{0, makespan.picoseconds()}}, Merge(comm, compute)));
  return best;
}

std::vector<StepStats::Interval> StepStats::CommUnion(size_t i) const {
  std::vector<Interval> comm;
  for (Lane lane : {kTensorCommLane, kDataCommLane, kPipelineCommLane, kExpertCommLane,
                    kContextCommLane}) {
    comm = Merge(comm, Union(LaneSpans(i, lane)));
  }
  return comm;
}

std::vector<StepStats::GpuBusy> StepStats::PerGpu() const { return Busy(); }

const std::vector<StepStats::GpuBusy>& StepStats::Busy() const {
  if (busy_.has_value()) return *busy_;
  const size_t n = plan_.simulated_gpus.size();
  std::vector<GpuBusy> out(n);
  const auto decode = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const std::vector<Interval> compute = Union(LaneSpans(i, kComputeLane));
      out[i] = {plan_.simulated_gpus[i], sim::Picoseconds(Length(compute)),
                sim::Picoseconds(Minus(CommUnion(i), compute))};
    }
  };
  // Each GPU is decoded on its own, so a huge step splits them over two
  // threads; the figures do not depend on the split.
  if (n >= kTwoThreadGpus) {
    std::thread second(decode, n / 2, n);
    decode(0, n / 2);
    second.join();
  } else {
    decode(0, n);
  }
  busy_ = std::move(out);
  return *busy_;
}

}  // namespace clustersim::strategies
