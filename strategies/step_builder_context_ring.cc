// Context parallelism: attention as Transformer Engine's ring of attention
// steps and K/V exchanges between the ranks of a context-parallel group.
#include <algorithm>
#include <utility>
#include <vector>

#include "sim/check.h"
#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {

// `whole` (attention_fwd or attention_bwd, possibly a recomputed forward) as
// Transformer Engine's ring (models/workload.h): on every rank, cp attention
// steps on the compute lane; while step j runs, the rank sends the K/V chunk
// it holds (backward: K/V and the dK/dV it has accumulated) to the next ring
// rank on its CP lane. Step j + 1 waits for its own send and for the receive
// from the previous rank (TE waits on both requests). Backward ends with a
// last dK/dV send to the chunk's owner, which the owner's next op waits for.
// Exposed when a send outlasts a step.
absl::Status Builder::AddRingAttention(const models::Op& whole, const Ctx& ctx, int layer) {
  const models::ContextRing& ring = *plan_.workload.context_ring;
  if (ring_ops_.forward_diagonal == nullptr) {
    // Copied into step_ops: TaskInfo must not point into the workload's
    // inline optional, which moves with the plan. Selective / full recompute
    // re-runs the forward ring.
    models::Op recompute_diagonal = ring.forward_diagonal;
    models::Op recompute_step = ring.forward_step;
    recompute_diagonal.recompute = recompute_step.recompute = true;
    ring_ops_.forward_diagonal = &AddStepOp(ring.forward_diagonal);
    ring_ops_.forward_step = &AddStepOp(ring.forward_step);
    ring_ops_.backward_diagonal = &AddStepOp(ring.backward_diagonal);
    ring_ops_.backward_step = &AddStepOp(ring.backward_step);
    ring_ops_.forward_exchange = &AddStepOp(ring.forward_exchange);
    ring_ops_.backward_exchange = &AddStepOp(ring.backward_exchange);
    ring_ops_.backward_final_exchange = &AddStepOp(ring.backward_final_exchange);
    ring_ops_.recompute_diagonal = &AddStepOp(std::move(recompute_diagonal));
    ring_ops_.recompute_step = &AddStepOp(std::move(recompute_step));
  }
  const bool backward = models::IsAttentionBackward(whole);
  const models::Op* diagonal = ring_ops_.forward_diagonal;
  const models::Op* step = ring_ops_.forward_step;
  if (whole.recompute) {
    diagonal = ring_ops_.recompute_diagonal;
    step = ring_ops_.recompute_step;
  } else if (backward) {
    diagonal = ring_ops_.backward_diagonal;
    step = ring_ops_.backward_step;
  }
  const models::Op* exchange =
      backward ? ring_ops_.backward_exchange : ring_ops_.forward_exchange;
  const std::vector<int>& gpus = *ctx.gpus;
  std::vector<int> prev(gpus.size()), next_gpu(gpus.size());
  for (size_t x = 0; x < gpus.size(); ++x) {
    const std::vector<int> group = placement_.ContextGroup(plan_.simulated_gpus[gpus[x]]);
    const int n = static_cast<int>(group.size());
    const int pos = placement_.CoordsOf(plan_.simulated_gpus[gpus[x]]).cp;
    // Folded: the ring predecessor runs the same tasks at the same times as
    // this rank (exact under context_fold_exact), so it stands in for it.
    prev[x] = plan_.folded_context_parallel ? gpus[x] : local_of_[group[(pos + n - 1) % n]];
    next_gpu[x] = group[(pos + 1) % n];
    SIM_CHECK(prev[x] >= 0) << "context-parallel ring predecessor not simulated";
  }
  if (merge_collectives_ && plan_.folded_context_parallel &&
      std::all_of(gpus.begin(), gpus.end(), [&](int i) { return CanExtendRun(i); })) {
    return MergeRing(*diagonal, *step, *exchange, backward, ring.steps, gpus, next_gpu);
  }
  std::vector<sim::TaskId> sent(gpu_.size(), kNone);  // per local GPU: last send
  auto send = [&](const models::Op& op, size_t x) -> absl::StatusOr<sim::TaskId> {
    const int from = plan_.simulated_gpus[gpus[x]];
    const std::vector<int> pair = {from, next_gpu[x]};
    absl::StatusOr<topology::CollectiveEstimate> est =
        Estimate(op, topology::Collective::kSendRecv, pair);
    if (!est.ok()) return est.status();
    TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                  .stage = ctx.stage, .chunk = ctx.chunk, .is_collective = true,
                  .algorithm = est->algorithm, .busbw_gbs = est->busbw_gbs, .group_size = 2};
    return AddCollectiveTask({gpu_[gpus[x]].lane.context}, *est, info,
                             topology::Collective::kSendRecv, pair, op.comm_bytes);
  };
  for (int j = 0; j < ring.steps; ++j) {
    const models::Op& op = j == 0 ? *diagonal : *step;
    const models::OpCost& cost = CostOf(op);
    TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                  .stage = ctx.stage, .chunk = ctx.chunk, .efficiency = cost.efficiency,
                  .source = cost.source};
    const uint32_t tag = NewInfo(info);
    std::vector<sim::TaskId> sends(gpus.size(), kNone);
    for (size_t x = 0; x < gpus.size(); ++x) {
      const int i = gpus[x];
      const sim::TaskId before = gpu_[i].last;
      const sim::TaskId t = plan_.graph.AddTask(gpu_[i].lane.compute, OnGpu(i, cost.time), tag);
      After(sent[i], t);
      if (prev[x] != i) After(sent[prev[x]], t);
      Chain(i, t);
      if (j + 1 < ring.steps) {
        absl::StatusOr<sim::TaskId> s = send(*exchange, x);
        if (!s.ok()) return s.status();
        After(j == 0 ? before : sent[i], *s);
        if (prev[x] != i) After(sent[prev[x]], *s);
        sends[x] = *s;
      }
    }
    for (size_t x = 0; x < gpus.size(); ++x) sent[gpus[x]] = sends[x];
  }
  if (backward && ring.steps > 1) {
    std::vector<sim::TaskId> finals(gpu_.size(), kNone);  // per local GPU
    for (size_t x = 0; x < gpus.size(); ++x) {
      absl::StatusOr<sim::TaskId> s = send(*ring_ops_.backward_final_exchange, x);
      if (!s.ok()) return s.status();
      Chain(gpus[x], *s);
      finals[gpus[x]] = *s;
    }
    for (size_t x = 0; x < gpus.size(); ++x) {
      if (finals[prev[x]] != kNone) gpu_[gpus[x]].waits.push_back(finals[prev[x]]);
    }
  }
  return absl::OkStatus();
}

}  // namespace clustersim::strategies::step_builder_internal
