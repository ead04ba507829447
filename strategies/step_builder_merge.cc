// Merged runs (BuildMode::merge_compute_chains): consecutive ops of one op
// list on a GPU that nothing else waits for become one task, and, without
// TaskInfo, folded collectives whose times are known join it as pieces
// (StepPlan::merged_runs, recorded by strategies/run_pieces.h).
#include <vector>

#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {

// Whether GPU i's next op may join its current merged run: the run is the
// last task of its chain and the op waits for nothing else.
bool Builder::CanExtendRun(int i) const {
  const GpuState& g = gpu_[i];
  return g.mergeable != kNone && g.mergeable == g.last && g.waits.empty();
}

// Lengthens GPU i's current run by an op on `lane`. A run that takes in a
// collective records its pieces (StepPlan::merged_runs), so that StepStats
// sees the lanes the unmerged ops would have occupied.
void Builder::ExtendRun(int i, Lane lane, sim::Duration d) {
  const sim::TaskId run = gpu_[i].mergeable;
  const sim::Duration at = plan_.graph.task(run).duration;
  if (lane != kComputeLane) pieces_->Open(i, run, &plan_);
  plan_.graph.ExtendTask(run, d);
  if (pieces_->IsOpen(i, run)) pieces_->Add(i, lane, at, d);
}

// A folded ring (each rank's sends stand in for its predecessor's) on GPUs
// whose runs can grow: every time in it is known now, so it joins the runs
// as the tasks AddRingAttention would add run. Step j starts when step j-1
// and exchange j-1 have ended; exchanges run back to back on the context
// lane (no other work uses it) from the ring's start; a backward ring ends
// with its final exchange.
absl::Status Builder::MergeRing(const models::Op& diagonal, const models::Op& step,
                                const models::Op& exchange, bool backward, int steps,
                                const std::vector<int>& gpus, const std::vector<int>& next_gpu) {
  for (size_t x = 0; x < gpus.size(); ++x) {
    const int i = gpus[x];
    const std::vector<int> pair = {plan_.simulated_gpus[i], next_gpu[x]};
    sim::Duration send, final_send;
    if (steps > 1) {
      absl::StatusOr<topology::CollectiveEstimate> e =
          Estimate(exchange, topology::Collective::kSendRecv, pair);
      if (!e.ok()) return e.status();
      send = e->time;
    }
    if (backward && steps > 1) {
      absl::StatusOr<topology::CollectiveEstimate> e =
          Estimate(*ring_ops_.backward_final_exchange, topology::Collective::kSendRecv, pair);
      if (!e.ok()) return e.status();
      final_send = e->time;
    }
    const sim::TaskId run = gpu_[i].mergeable;
    const sim::Duration base = plan_.graph.task(run).duration;
    pieces_->Open(i, run, &plan_);
    sim::Duration t = base;
    for (int j = 0; j < steps; ++j) {
      const sim::Duration start = j == 0 ? base : sim::Max(t, base + send * j);
      const sim::Duration compute = CostOf(j == 0 ? diagonal : step).time;
      pieces_->Add(i, kComputeLane, start, compute);
      if (j + 1 < steps) pieces_->Add(i, kContextCommLane, base + send * j, send);
      t = start + compute;
    }
    if (backward && steps > 1) {
      pieces_->Add(i, kContextCommLane, t, final_send);
      t += final_send;
    }
    plan_.graph.ExtendTask(run, t - base);
  }
  return absl::OkStatus();
}

}  // namespace clustersim::strategies::step_builder_internal
